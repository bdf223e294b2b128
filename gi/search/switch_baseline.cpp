#include "gi/search/switch_baseline.hpp"

#include <stdexcept>

namespace gi {

SwitchBaseline measure_switch_baseline(Evaluator& evaluator, const Seed& seed, const Tuning& seed_tuning,
                                       const TuningSpace& space) {
  SwitchBaseline b;
  std::vector<grammar::Patch> patches;
  for (const SwitchSetting& s : switch_settings(seed)) {
    b.trials.push_back({s.name, s.patch, {}, seed_tuning, {}});
    patches.push_back(s.patch);
  }
  // Each setting at every block size (with the seed's compile options), all
  // settings of one block size in one batch: a path that wants other blocks
  // than the plain kernel (shared-memory tiles, warps per item) is ranked at
  // its own best, not at the seed's.
  std::vector<unsigned> blocks = space.block_sizes;
  if (blocks.empty()) blocks.push_back(seed_tuning.block_size);
  for (unsigned block : blocks) {
    const Tuning t{block, seed_tuning.options};
    evaluator.set_tuning(t);
    const std::vector<Evaluation> evals = evaluator.evaluate(patches);
    for (std::size_t i = 0; i < b.trials.size(); ++i) {
      SwitchBaseline::Trial& trial = b.trials[i];
      trial.block_trials.push_back({t, evals.at(i)});
      if (evals[i].valid() && (!trial.eval.valid() || evals[i].median_ms < trial.eval.median_ms)) {
        trial.eval = evals[i];
        trial.tuning = t;
      }
    }
  }
  const SwitchBaseline::Trial* best = nullptr;
  for (const SwitchBaseline::Trial& t : b.trials)
    if (t.eval.valid() && (!best || t.eval.median_ms < best->eval.median_ms)) best = &t;
  if (!best) throw std::runtime_error("switch baseline: no switch setting of " + seed.display_path + " is valid");
  b.best_setting = best->setting;
  b.best_patch = best->patch;
  // The fastest setting, retuned over the whole space (block sizes and compile options).
  const TuningResult tuned = tune(evaluator, b.best_patch, space);
  b.best_tuning = tuned.best;
  b.best_median_ms = tuned.best_eval.median_ms;
  evaluator.set_tuning(seed_tuning);
  return b;
}

Tuning search_tuning(const SwitchBaseline& b, const Tuning& seed_tuning) {
  return b.best_patch.edits.empty() ? seed_tuning : b.best_tuning;
}

bool switch_baseline_beats(const SwitchBaseline& b, double winner_median_ms, double noise_margin) {
  return b.best_median_ms > 0 && b.best_median_ms * (1 + noise_margin) < winner_median_ms;
}

nlohmann::json SwitchBaseline::to_json() const {
  nlohmann::json trials_json = nlohmann::json::array();
  for (const Trial& t : trials) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const TuningTrial& bt : t.block_trials)
      blocks.push_back({{"tuning", gi::to_json(bt.tuning)},
                        {"status", gi::to_string(bt.eval.status)},
                        {"median_ms", bt.eval.valid() ? nlohmann::json(bt.eval.median_ms) : nlohmann::json(nullptr)}});
    trials_json.push_back({{"setting", t.setting.empty() ? "default" : t.setting},
                           {"patch", grammar::to_string(t.patch)},
                           {"status", gi::to_string(t.eval.status)},
                           {"tuning", gi::to_json(t.tuning)},
                           {"median_ms", t.eval.valid() ? nlohmann::json(t.eval.median_ms) : nlohmann::json(nullptr)},
                           {"block_trials", blocks}});
  }
  return {{"trials", trials_json},
          {"best", {{"setting", best_setting.empty() ? "default" : best_setting},
                    {"patch", grammar::to_string(best_patch)},
                    {"tuning", gi::to_json(best_tuning)},
                    {"median_ms", best_median_ms}}}};
}

SwitchBaseline SwitchBaseline::from_json(const nlohmann::json& j) {
  SwitchBaseline b;
  try {
    const nlohmann::json& best = j.at("best");
    const std::string setting = best.at("setting").get<std::string>();
    b.best_setting = setting == "default" ? "" : setting;
    b.best_patch = grammar::parse_patch(best.at("patch").get<std::string>(), "switch_baseline.json best.patch");
    b.best_tuning = tuning_from_json(best.at("tuning"));
    b.best_median_ms = best.at("median_ms").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("switch_baseline.json: expected best.{setting, patch, tuning, median_ms}: ") +
                             e.what());
  }
  return b;
}

}  // namespace gi
