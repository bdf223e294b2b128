#include "gi/run/winner_retune.hpp"

#include <algorithm>
#include <stdexcept>

namespace gi {

std::vector<grammar::Patch> winner_candidates(const SearchState& state, std::size_t limit) {
  std::vector<grammar::Patch> out;
  if (state.best) out.push_back(state.best->patch);
  std::vector<const Individual*> valid;
  for (const Individual& i : state.population)
    if (i.eval.valid()) valid.push_back(&i);
  std::stable_sort(valid.begin(), valid.end(),
                   [](const Individual* a, const Individual* b) { return a->eval.median_ms < b->eval.median_ms; });
  for (const Individual* i : valid) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), i->patch) == out.end()) out.push_back(i->patch);
  }
  if (out.empty()) out.push_back(grammar::Patch{});
  return out;
}

nlohmann::json retune_winner(Evaluator& evaluator, const SearchState& state, const TuningSpace& space,
                             const std::optional<SwitchBaseline>& baseline,
                             const std::function<void(const std::string&)>& say,
                             const std::optional<grammar::Patch>& swept) {
  grammar::Patch winner;
  TuningResult tuned;
  auto candidates = winner_candidates(state, 8);
  if (swept && !(*swept == candidates.front())) candidates.insert(candidates.begin(), *swept);
  for (std::size_t i = 0;; ++i) {
    if (i == candidates.size()) {
      say("no search candidate is valid on the tuning data: the seed is the winner");
      winner = grammar::Patch{};
      tuned = tune(evaluator, winner, space);
      break;
    }
    try {
      tuned = tune(evaluator, candidates[i], space);
      winner = candidates[i];
      break;
    } catch (const std::runtime_error& e) {
      say("candidate " + std::to_string(i + 1) + " is dropped: " + e.what());
    }
  }
  nlohmann::json j = tuned.to_json();
  if (!(winner == (state.best ? state.best->patch : grammar::Patch{}))) j["winner_patch"] = grammar::to_string(winner);
  if (baseline && switch_baseline_beats(*baseline, tuned.best_eval.median_ms, state.noise_margin)) {
    say("the search's winner (" + std::to_string(tuned.best_eval.median_ms) + " ms) is slower than the best switch "
        "setting alone (" + std::to_string(baseline->best_median_ms) + " ms): that setting is the winner");
    j["search_winner"] = {{"patch", grammar::to_string(winner)}, {"tuning", j["best"]},
                          {"median_ms", tuned.best_eval.median_ms}};
    j["best"] = to_json(baseline->best_tuning);
    j["best_median_ms"] = baseline->best_median_ms;
    j["winner_patch"] = grammar::to_string(baseline->best_patch);
  }
  return j;
}

grammar::Patch retuned_winner_patch(const nlohmann::json& tuning_best, const SearchState& state) {
  if (tuning_best.contains("winner_patch"))
    return grammar::parse_patch(tuning_best.at("winner_patch").get<std::string>(), "tuning_best.json winner_patch");
  return state.best ? state.best->patch : grammar::Patch{};
}

}  // namespace gi
