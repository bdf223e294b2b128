#include "gi/seed/switch_settings.hpp"

#include <map>
#include <stdexcept>

#include "grammar/switches.hpp"

namespace gi {

namespace {

SwitchSetting setting_of(const std::map<std::string, std::string>& values, const std::map<std::string, std::string>& defaults) {
  SwitchSetting s;
  for (const auto& [name, value] : values) {
    if (defaults.at(name) == value) continue;
    s.name += (s.name.empty() ? "" : ",") + name + "=" + value;
    s.patch.edits.push_back(grammar::Edit{"define", name, "", 0, 0, value});
  }
  return s;
}

}  // namespace

std::vector<SwitchSetting> switch_settings(const Seed& seed, std::size_t limit) {
  return switch_settings(seed.grammar, seed.context, seed.display_path, limit);
}

std::vector<SwitchSetting> switch_settings(const grammar::Grammar& g, const grammar::EditContext& context,
                                           const std::string& display_path, std::size_t limit) {
  const auto& switches = context.switches;
  const std::map<std::string, std::string> defaults = grammar::switch_values(g, context);
  for (const auto& s : switches)
    if (!defaults.count(s.name))
      throw std::runtime_error(display_path + ": switch " + s.name + " has no `#define " + s.name + " VALUE` line");
  std::vector<SwitchSetting> out = {SwitchSetting{}};
  auto allowed = [&](const std::map<std::string, std::string>& values) {
    return grammar::switch_setting_allowed(context.switch_combinations, values);
  };
  std::size_t product = 1;
  for (const auto& s : switches) product *= std::max<std::size_t>(1, s.values.size());
  if (product <= limit) {
    // Odometer over every switch's values.
    std::vector<std::size_t> at(switches.size(), 0);
    for (std::size_t n = 0; n < product; ++n) {
      std::map<std::string, std::string> values;
      for (std::size_t i = 0; i < switches.size(); ++i) values[switches[i].name] = switches[i].values[at[i]];
      if (values != defaults && allowed(values)) out.push_back(setting_of(values, defaults));
      for (std::size_t i = 0; i < switches.size() && ++at[i] == switches[i].values.size(); ++i) at[i] = 0;
    }
    return out;
  }
  for (const auto& s : switches)
    for (const std::string& v : s.values) {
      std::map<std::string, std::string> values = defaults;
      values[s.name] = v;
      if (values != defaults && allowed(values)) out.push_back(setting_of(values, defaults));
    }
  return out;
}

}  // namespace gi
