#pragma once
// The GPUs a command is told to use: "all" or device numbers, "0,1".
#include <string>
#include <vector>

namespace gi {

// "0,1" -> {0, 1}; "all" -> every device this process sees. Throws
// std::runtime_error naming `option` for anything else, for a device given
// twice, and for "all" on a machine without a CUDA device.
std::vector<int> parse_gpu_list(const std::string& text, const std::string& option);

}  // namespace gi
