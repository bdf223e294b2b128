#pragma once
// `gi evolve-all --gpus 0,1`: one child `gi evolve-all` per GPU, each a
// shard of the same folder (gi/run/shard.hpp), all at once. The children write
// to this process's standard output and error; a SIGINT or SIGTERM sent to
// this process (a time limit, Ctrl-C) is passed on to every child, so each
// stops as a killed run does and the next call resumes them all.
#include <string>
#include <vector>

namespace gi {

struct ChildResult {
  int exit_code = -1;   // 128 + signal when killed by one
  std::string problem;  // set when it could not be started
};

// Starts every argv (argv[0] a path) and waits for all of them.
std::vector<ChildResult> run_children(const std::vector<std::vector<std::string>>& argvs);

}  // namespace gi
