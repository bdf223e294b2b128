#include "gi/search/tuning.hpp"

#include <stdexcept>

namespace gi {

TuningResult tune(Evaluator& evaluator, const grammar::Patch& patch, const TuningSpace& space) {
  TuningResult result;
  bool found = false;
  for (const auto& options : space.option_sets) {
    for (unsigned block : space.block_sizes) {
      Tuning t{block, options};
      evaluator.set_tuning(t);
      const Evaluation e = evaluator.evaluate({patch}).at(0);
      result.trials.push_back({t, e});
      if (e.valid() && (!found || e.median_ms < result.best_eval.median_ms)) {
        result.best = t;
        result.best_eval = e;
        found = true;
      }
    }
  }
  if (!found) throw std::runtime_error("tuning: no block size / option set gives a valid variant of '" +
                                       grammar::to_string(patch) + "'");
  evaluator.set_tuning(result.best);
  return result;
}

nlohmann::json TuningResult::to_json() const {
  nlohmann::json trials_json = nlohmann::json::array();
  for (const auto& t : trials)
    trials_json.push_back({{"tuning", gi::to_json(t.tuning)}, {"status", gi::to_string(t.eval.status)},
                           {"median_ms", t.eval.valid() ? nlohmann::json(t.eval.median_ms) : nlohmann::json(nullptr)}});
  return {{"best", gi::to_json(best)}, {"best_median_ms", best_eval.median_ms}, {"trials", trials_json}};
}

}  // namespace gi
