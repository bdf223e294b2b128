#include "gi/switch_baseline.hpp"

#include <stdexcept>

namespace gi {

SwitchBaseline measure_switch_baseline(Evaluator& evaluator, const Seed& seed, const Tuning& seed_tuning,
                                       const TuningSpace& space) {
  SwitchBaseline b;
  std::vector<grammar::Patch> patches;
  for (const SwitchSetting& s : switch_settings(seed)) {
    b.trials.push_back({s.name, s.patch, {}});
    patches.push_back(s.patch);
  }
  evaluator.set_tuning(seed_tuning);
  const std::vector<Evaluation> evals = evaluator.evaluate(patches);
  const SwitchBaseline::Trial* best = nullptr;
  for (std::size_t i = 0; i < b.trials.size(); ++i) {
    b.trials[i].eval = evals.at(i);
    if (b.trials[i].eval.valid() && (!best || b.trials[i].eval.median_ms < best->eval.median_ms)) best = &b.trials[i];
  }
  if (!best) throw std::runtime_error("switch baseline: no switch setting of " + seed.display_path + " is valid");
  b.best_setting = best->setting;
  b.best_patch = best->patch;
  const TuningResult tuned = tune(evaluator, b.best_patch, space);
  b.best_tuning = tuned.best;
  b.best_median_ms = tuned.best_eval.median_ms;
  evaluator.set_tuning(seed_tuning);
  return b;
}

nlohmann::json SwitchBaseline::to_json() const {
  nlohmann::json trials_json = nlohmann::json::array();
  for (const Trial& t : trials)
    trials_json.push_back({{"setting", t.setting.empty() ? "default" : t.setting},
                           {"patch", grammar::to_string(t.patch)},
                           {"status", gi::to_string(t.eval.status)},
                           {"median_ms", t.eval.valid() ? nlohmann::json(t.eval.median_ms) : nlohmann::json(nullptr)}});
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
