#include "gi/search/parameter_sweep.hpp"

#include <cmath>
#include <stdexcept>

#include "grammar/patch_apply.hpp"

namespace gi {
namespace {

// Whether edit i of `patch` changes nothing: a later edit overrides it (a
// second coarsen factor, privatise's grid-stride loop after coarsen's), so
// the variant is the same source and launch without it. Sweeping it would
// only time copies of one variant.
bool overridden(const EditOperators& ops, const grammar::Patch& patch, std::size_t i) {
  grammar::Patch without = patch;
  without.edits.erase(without.edits.begin() + static_cast<std::ptrdiff_t>(i));
  try {
    const grammar::PatchedKernel with_it = grammar::patch_kernel(ops.grammar(), patch, ops.context());
    const grammar::PatchedKernel without_it = grammar::patch_kernel(ops.grammar(), without, ops.context());
    return with_it.source == without_it.source && with_it.launch == without_it.launch;
  } catch (const grammar::PatchError&) {
    return false;  // the edit is needed for the patch to hold together
  }
}

}  // namespace

SweptPatch sweep_parameters(Evaluator& evaluator, const EditOperators& ops, const grammar::Patch& winner,
                            double noise_margin, int max_evaluations) {
  SweptPatch s;
  s.patch = winner;
  s.eval = evaluator.evaluate({winner}).at(0);
  s.evaluations = 1;
  if (!s.eval.valid())
    throw std::runtime_error("parameter sweep: the search's winner is not valid (" + to_string(s.eval.status) + ")");
  for (std::size_t i = 0; i < s.patch.edits.size(); ++i) {
    SweepStep step;
    step.edit = s.patch.edits[i];
    step.tried = ops.alternatives(step.edit);
    if (step.tried.empty() || overridden(ops, s.patch, i)) continue;
    if (s.evaluations + static_cast<int>(step.tried.size()) + 1 > max_evaluations) break;
    // The current patch is measured again beside its alternatives, so that
    // each comparison is between variants timed in one batch.
    std::vector<grammar::Patch> batch{s.patch};
    for (const grammar::Edit& alternative : step.tried) {
      grammar::Patch p = s.patch;
      p.edits[i] = alternative;
      batch.push_back(std::move(p));
    }
    std::vector<Evaluation> results = evaluator.evaluate(batch);
    s.evaluations += static_cast<int>(batch.size());
    if (results.at(0).valid()) s.eval = results[0];
    double best = s.eval.median_ms * (1.0 - noise_margin);
    for (std::size_t a = 0; a < step.tried.size(); ++a) {
      const Evaluation& e = results.at(a + 1);
      if (e.valid() && e.median_ms < best) {
        best = e.median_ms;
        step.kept = static_cast<int>(a);
      }
    }
    step.evaluations.assign(results.begin() + 1, results.end());
    if (step.kept >= 0) {
      s.patch = batch[static_cast<std::size_t>(step.kept) + 1];
      s.eval = results[static_cast<std::size_t>(step.kept) + 1];
    }
    s.steps.push_back(std::move(step));
  }
  return s;
}

nlohmann::json SweptPatch::to_json() const {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json steps_json = nlohmann::json::array();
  for (const SweepStep& step : steps) {
    nlohmann::json tried = nlohmann::json::array();
    for (std::size_t a = 0; a < step.tried.size(); ++a) {
      const Evaluation& e = step.evaluations.at(a);
      tried.push_back({{"edit", grammar::to_string(step.tried[a])},
                       {"median_ms", e.valid() ? finite(e.median_ms) : nlohmann::json(nullptr)},
                       {"status", to_string(e.status)}});
    }
    steps_json.push_back({{"edit", grammar::to_string(step.edit)},
                          {"kept", step.kept >= 0 ? nlohmann::json(grammar::to_string(step.tried[step.kept])) : nlohmann::json(nullptr)},
                          {"tried", tried}});
  }
  return {{"patch", grammar::to_string(patch)}, {"median_ms", finite(eval.median_ms)}, {"evaluations", evaluations},
          {"steps", steps_json}};
}

}  // namespace gi
