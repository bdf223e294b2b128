#include "grammar/edit_context.hpp"

#include <algorithm>

namespace gi::grammar {

bool switch_setting_allowed(const SwitchCombinations& combinations, const std::map<std::string, std::string>& setting) {
  if (combinations.empty()) return true;
  for (const auto& entry : combinations) {
    bool admits = true;
    for (const auto& [name, values] : entry) {
      const auto it = setting.find(name);
      const std::string value = it == setting.end() ? std::string() : it->second;
      bool listed = false;
      for (const std::string& v : values) listed = listed || v == value;
      admits = admits && listed;
    }
    if (admits) return true;
  }
  return false;
}

std::optional<std::map<std::string, std::string>> nearest_allowed_setting(
    const EditContext& context, const std::map<std::string, std::string>& setting, const std::string& keep) {
  if (switch_setting_allowed(context.switch_combinations, setting)) return setting;
  const auto kept = setting.find(keep);
  if (kept == setting.end()) return std::nullopt;
  // Every setting of the declared switches, odometer style (a seed declares a
  // handful of switches with a few values each).
  std::vector<std::size_t> digit(context.switches.size(), 0);
  std::optional<std::map<std::string, std::string>> best;
  std::size_t best_changes = 0;
  for (;;) {
    std::map<std::string, std::string> candidate;
    for (std::size_t i = 0; i < digit.size(); ++i)
      if (!context.switches[i].values.empty()) candidate[context.switches[i].name] = context.switches[i].values[digit[i]];
    if (candidate[keep] == kept->second && switch_setting_allowed(context.switch_combinations, candidate)) {
      std::size_t changes = 0;
      for (const auto& [name, value] : candidate) {
        const auto it = setting.find(name);
        changes += it == setting.end() || it->second != value;
      }
      if (!best || changes < best_changes) best = candidate, best_changes = changes;
    }
    std::size_t i = 0;
    while (i < digit.size() && ++digit[i] >= std::max<std::size_t>(1, context.switches[i].values.size())) digit[i++] = 0;
    if (i == digit.size()) break;
  }
  return best;
}

}  // namespace gi::grammar
