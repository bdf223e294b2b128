#pragma once
// Shared helpers for tests: the seed folders and reading files.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gi/seed.hpp"

namespace gi::test {

// GI_TEST_SOURCE_DIR overrides the build's source folder, for a test binary
// carried to another machine (the GPU host).
inline std::filesystem::path source_dir() {
  const char* env = std::getenv("GI_TEST_SOURCE_DIR");
  return env ? env : GI_SOURCE_DIR;
}

inline std::vector<std::filesystem::path> seed_dirs() {
  return {source_dir() / "seeds/bspline/deformation_field", source_dir() / "seeds/resampling/trilinear",
          source_dir() / "seeds/tools/convolution_x"};
}

inline std::string sample_source() { return read_text_file(std::filesystem::path(GI_TEST_DATA) / "sample.cu"); }

}  // namespace gi::test
