#pragma once
// Where gi looks for the CUDA toolkit's own files (ptxas, compute-sanitizer,
// the include folder NVRTC is given): $CUDA_HOME first, then
// /usr/local/cuda. One list, so every tool is looked for in the same places.
#include <filesystem>
#include <vector>

namespace gi::fitness {

std::vector<std::filesystem::path> cuda_toolkit_roots();

}  // namespace gi::fitness
