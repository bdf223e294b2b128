#include "fitness/compile/cuda_toolkit.hpp"

#include <cstdlib>

namespace gi::fitness {

std::vector<std::filesystem::path> cuda_toolkit_roots() {
  std::vector<std::filesystem::path> roots;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) roots.emplace_back(home);
  roots.emplace_back("/usr/local/cuda");
  return roots;
}

}  // namespace gi::fitness
