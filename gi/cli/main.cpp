// The `gi` command line: genetic improvement of CUDA registration kernels.
// Each sub-command registers itself (gi/cli/command_registry.hpp).
#include "gi/cli/command_registry.hpp"

int main(int argc, char** argv) { return gi::cli::run_command_line(argc, argv); }
