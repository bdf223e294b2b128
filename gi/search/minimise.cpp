#include "gi/search/minimise.hpp"

#include <algorithm>
#include <stdexcept>

namespace gi {
namespace {

grammar::Patch without(const grammar::Patch& p, std::size_t i) {
  grammar::Patch q = p;
  q.edits.erase(q.edits.begin() + static_cast<long>(i));
  return q;
}

}  // namespace

MinimisedPatch minimise(Evaluator& evaluator, const grammar::Patch& patch, double noise_margin) {
  MinimisedPatch m;
  m.patch = patch;
  m.eval = evaluator.evaluate({patch}).at(0);
  if (!m.eval.valid()) throw std::runtime_error("minimise: the patch to minimise is not valid (" + to_string(m.eval.status) + ")");
  // Pass 1: try dropping each edit, last first (later edits may depend on
  // earlier ones through the seed's line ids, never the other way round).
  for (std::size_t i = m.patch.edits.size(); i-- > 0;) {
    const grammar::Patch candidate = without(m.patch, i);
    const Evaluation e = evaluator.evaluate({candidate}).at(0);
    if (e.valid() && e.median_ms <= m.eval.median_ms * (1.0 + noise_margin)) {
      m.dropped.push_back(m.patch.edits[i]);
      m.patch = candidate;
      m.eval = e;
    }
  }
  // Pass 2: each remaining edit's contribution, then re-add in ranked order.
  std::vector<EditContribution> contributions;
  for (std::size_t i = 0; i < m.patch.edits.size(); ++i) {
    const Evaluation e = evaluator.evaluate({without(m.patch, i)}).at(0);
    EditContribution c;
    c.edit = m.patch.edits[i];
    c.time_without_ms = e.median_ms;
    c.contribution = e.valid() ? e.median_ms / m.eval.median_ms - 1.0 : std::numeric_limits<double>::infinity();
    contributions.push_back(c);
  }
  std::stable_sort(contributions.begin(), contributions.end(),
                   [](const EditContribution& a, const EditContribution& b) { return a.contribution > b.contribution; });
  grammar::Patch built;
  for (auto& c : contributions) {
    built.edits.push_back(c.edit);
    const Evaluation e = evaluator.evaluate({built}).at(0);
    c.cumulative_ms = e.valid() ? e.median_ms : std::numeric_limits<double>::infinity();
  }
  m.contributions = std::move(contributions);
  return m;
}

nlohmann::json MinimisedPatch::to_json() const {
  nlohmann::json edits = nlohmann::json::array();
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  for (const auto& c : contributions)
    edits.push_back({{"edit", grammar::to_string(c.edit)}, {"time_without_ms", finite(c.time_without_ms)},
                     {"contribution", finite(c.contribution)}, {"cumulative_ms", finite(c.cumulative_ms)}});
  nlohmann::json dropped_json = nlohmann::json::array();
  for (const auto& d : dropped) dropped_json.push_back(grammar::to_string(d));
  return {{"patch", grammar::to_string(patch)}, {"median_ms", eval.median_ms}, {"dropped", dropped_json}, {"edits", edits}};
}

}  // namespace gi
