#include "grammar/patch_effect.hpp"

namespace gi::grammar {

std::string to_string(const LaunchEffect& effect) {
  std::string out;
  for (const auto& [name, value] : effect.switches) out += (out.empty() ? "" : ",") + name + "=" + value;
  if (effect.coarsen != 1) out += ";coarsen=" + std::to_string(effect.coarsen);
  if (effect.grid_threads != 0) out += ";grid_threads=" + std::to_string(effect.grid_threads);
  if (!effect.private_buffer.empty())
    out += ";private=" + effect.private_buffer + "x" + std::to_string(effect.private_element_bytes);
  if (effect.group != 1) out += ";group=" + std::to_string(effect.group);
  if (!effect.swap_axes.empty()) out += ";remap=" + effect.swap_axes;
  for (const auto& [buffer, bytes] : effect.staged) out += ";stage=" + buffer + "x" + std::to_string(bytes);
  return out;
}

}  // namespace gi::grammar
