#include "grammar/patch_effect.hpp"

namespace gi::grammar {

std::string to_string(const LaunchEffect& effect) {
  std::string out;
  for (const auto& [name, value] : effect.switches) out += (out.empty() ? "" : ",") + name + "=" + value;
  if (effect.coarsen != 1) out += ";coarsen=" + std::to_string(effect.coarsen);
  if (effect.group != 1) out += ";group=" + std::to_string(effect.group);
  return out;
}

}  // namespace gi::grammar
