#pragma once
// Shared helpers for tests: the seed folders and reading files.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gi/seed/seed.hpp"
#include "gi/library/seed_library.hpp"

namespace gi::test {

// GI_TEST_SOURCE_DIR overrides the build's source folder, for a test binary
// carried to another machine (the GPU host).
inline std::filesystem::path source_dir() {
  const char* env = std::getenv("GI_TEST_SOURCE_DIR");
  return env ? env : GI_SOURCE_DIR;
}

// The gi binary the tests start (workers, compile servers, subcommands);
// GI_TEST_BINARY overrides the build's, for a test binary carried elsewhere.
inline std::string gi_binary() {
  const char* env = std::getenv("GI_TEST_BINARY");
  return env ? env : GI_BINARY;
}

// Every seed folder of the library (gi::find_seed_dirs): the first three
// seeds first (tests index them), then the rest in path order.
inline std::vector<std::filesystem::path> seed_dirs() {
  std::vector<std::filesystem::path> dirs = {source_dir() / "seeds/bspline/deformation_field",
                                             source_dir() / "seeds/resampling/trilinear",
                                             source_dir() / "seeds/tools/convolution_x"};
  const std::size_t first = dirs.size();
  for (const auto& dir : find_seed_dirs(source_dir() / "seeds")) {
    bool listed = false;
    for (std::size_t i = 0; i < first; ++i) listed = listed || std::filesystem::equivalent(dirs[i], dir);
    if (!listed) dirs.push_back(dir);
  }
  return dirs;
}

// The line of the last grammar rule holding `text`: in a seed with switch
// paths the plain path (#else) comes last, so this names its line, and tests
// stay right when a path is added above it.
inline int last_rule_line_holding(const Seed& seed, const std::string& text) {
  int line = 0;
  for (const auto& r : seed.grammar.rules())
    if (r.text.find(text) != std::string::npos) line = r.first_line;
  return line;
}

// "family/kernel" of a seed folder.
inline std::string seed_name(const std::filesystem::path& dir) {
  return dir.parent_path().filename().string() + "/" + dir.filename().string();
}

struct CommandOutput {
  std::string output;  // stdout and stderr together
  int exit_code = -1;
};

// Runs a shell command line; stdout and stderr together.
inline CommandOutput run_command(const std::string& command_line) {
  CommandOutput r;
  const std::string command = command_line + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the gi binary as a user would: `gi <args>`.
inline CommandOutput run_gi(const std::string& args) { return run_command("\"" + gi_binary() + "\" " + args); }

inline std::string sample_source() { return read_text_file(std::filesystem::path(GI_TEST_DATA) / "sample.cu"); }

}  // namespace gi::test
