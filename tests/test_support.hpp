#pragma once
// Shared helpers for tests: the seed folders and reading files.
#include <algorithm>
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

// Every seed folder of the library (a folder under seeds/ holding spec.json
// and kernel.cu): the first three seeds first (tests index them), then the
// rest in path order.
inline std::vector<std::filesystem::path> seed_dirs() {
  std::vector<std::filesystem::path> dirs = {source_dir() / "seeds/bspline/deformation_field",
                                             source_dir() / "seeds/resampling/trilinear",
                                             source_dir() / "seeds/tools/convolution_x"};
  std::vector<std::filesystem::path> others;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir() / "seeds")) {
    const auto dir = entry.path();
    if (!entry.is_directory() || !std::filesystem::exists(dir / "spec.json") ||
        !std::filesystem::exists(dir / "kernel.cu"))
      continue;
    bool listed = false;
    for (const auto& d : dirs) listed = listed || std::filesystem::equivalent(d, dir);
    if (!listed) others.push_back(dir);
  }
  std::sort(others.begin(), others.end());
  dirs.insert(dirs.end(), others.begin(), others.end());
  return dirs;
}

// "family/kernel" of a seed folder.
inline std::string seed_name(const std::filesystem::path& dir) {
  return dir.parent_path().filename().string() + "/" + dir.filename().string();
}

inline std::string sample_source() { return read_text_file(std::filesystem::path(GI_TEST_DATA) / "sample.cu"); }

}  // namespace gi::test
