#include "fitness/compile/automatic_pch.hpp"

#include <nvrtc.h>

#include <algorithm>

namespace gi::fitness {

namespace {

std::filesystem::path& pch_dir() {
  static std::filesystem::path dir;  // empty: off
  return dir;
}

bool nvrtc_has_automatic_pch() {
  int major = 0, minor = 0;
  return nvrtcVersion(&major, &minor) == NVRTC_SUCCESS && (major > 12 || (major == 12 && minor >= 8));
}

}  // namespace

void use_automatic_pch(const std::filesystem::path& dir) {
  if (!nvrtc_has_automatic_pch()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) pch_dir() = dir;  // a folder that cannot be made: compiles as before
}

std::vector<std::string> automatic_pch_options(const std::string& source, const std::vector<std::string>& options) {
  if (pch_dir().empty()) return {};
  const bool includes = source.find("#include") != std::string::npos ||
                        std::any_of(options.begin(), options.end(), [](const std::string& o) {
                          return o.rfind("--pre-include", 0) == 0 || o.rfind("-include", 0) == 0;
                        });
  if (!includes) return {};
  // NVRTC fails the compile for a PCH folder that is not there: one removed
  // under a running server (a temp cleaner) is made again, else no PCH.
  std::error_code ec;
  if (!std::filesystem::is_directory(pch_dir(), ec) && !std::filesystem::create_directories(pch_dir(), ec)) return {};
  return {"--pch", "--pch-messages=false", "--pch-dir=" + pch_dir().string()};
}

}  // namespace gi::fitness
