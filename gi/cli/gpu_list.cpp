#include "gi/cli/gpu_list.hpp"

#include <algorithm>
#include <stdexcept>

#include "fitness/gpu/cuda_devices.hpp"

namespace gi {

std::vector<int> parse_gpu_list(const std::string& text, const std::string& option) {
  std::vector<int> gpus;
  if (text == "all") {
    const auto env = fitness::probe_cuda();
    for (int i = 0; i < static_cast<int>(env.gpus.size()); ++i) gpus.push_back(i);
    if (gpus.empty()) throw std::runtime_error(option + " all: no CUDA device (" + env.message + ")");
    return gpus;
  }
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    try {
      std::size_t used = 0;
      const int d = std::stoi(item, &used);
      if (used != item.size() || d < 0) throw std::invalid_argument(item);
      gpus.push_back(d);
    } catch (const std::exception&) {
      throw std::runtime_error(option + ": expected 'all' or device numbers separated by commas, got '" + text + "'");
    }
    at = comma + 1;
  }
  for (std::size_t i = 0; i < gpus.size(); ++i)
    if (std::count(gpus.begin(), gpus.end(), gpus[i]) > 1)
      throw std::runtime_error(option + ": device " + std::to_string(gpus[i]) + " is given twice in '" + text + "'");
  return gpus;
}

}  // namespace gi
