#include "gi/seed/coverage_checks.hpp"

#include "gi/seed/input_distributions.hpp"

namespace gi {

std::vector<CoverageCheck> one_sign_checks(const nlohmann::ordered_json& spec) {
  using json = nlohmann::ordered_json;
  const json* checks = nullptr;
  if (spec.contains("workloads") && spec["workloads"].contains("train_checks")) checks = &spec["workloads"]["train_checks"];
  if (!checks || !checks->is_array() || checks->empty()) return {};
  const json& base = (*checks)[0];
  if (!base.contains("variables") || !base["variables"].contains("inputs")) return {};
  std::vector<std::string> floats;
  for (const auto& [name, d] : base["variables"]["inputs"].items())
    if (d == default_float_distribution()) floats.push_back(name);
  if (floats.empty()) return {};
  const std::vector<std::pair<std::string, json>> signs = {
      {"every float input in uniform(0.5, 1.5)", {{"uniform", json::array({0.5, 1.5})}}},
      {"every float input in uniform(-1.5, -0.5)", {{"uniform", json::array({-1.5, -0.5})}}},
      {"every float input 0", {{"constant", 0}}}};
  std::vector<CoverageCheck> out;
  for (const auto& [description, d] : signs) {
    json c = base;
    for (const std::string& name : floats) c["variables"]["inputs"][name] = d;
    c["purpose"] = "gi init --check: " + description + ", for the branch directions inputs of both signs miss";
    out.push_back({description, std::move(c)});
  }
  return out;
}

}  // namespace gi
