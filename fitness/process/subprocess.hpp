#pragma once
// Runs a program to completion with its output captured in a file. Uses
// posix_spawn, so it is safe from the threads of a multi-threaded process
// (the compile pool).
#include <filesystem>
#include <string>
#include <vector>

namespace gi::fitness {

struct SubprocessResult {
  int exit_code = -1;   // 128 + signal when killed by one
  std::string output;   // stdout and stderr together
  std::string problem;  // set when it could not be started or waited for
};

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::filesystem::path& log_file);

std::string read_text_file(const std::filesystem::path& file);

}  // namespace gi::fitness
