#include "grammar/edit_context.hpp"

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

}  // namespace gi::grammar
