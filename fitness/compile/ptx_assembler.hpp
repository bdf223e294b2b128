#pragma once
// PTX -> cubin with the toolkit's ptxas, the second stage of a two-stage
// compile. Many variants differ in source but not in PTX (an edit to dead
// code, a pragma the compiler already applied): NVRTC's front end runs for
// each of them, ptxas (about half of the compile) only once per distinct PTX.
// ptxas runs as a whole-program compile, as inside NVRTC, so the cubin is the
// one a one-stage compile gives (nvJitLink was tried: it assembles
// relocatable code, with different register allocation). Without a ptxas of
// NVRTC's release, gi falls back to one-stage compiles.
#include <string>
#include <vector>

namespace gi::fitness {

struct Assembly {
  bool ok = false;
  std::vector<char> cubin;
  std::string log;    // ptxas output (the -v resource lines, warnings, errors)
  std::string error;  // empty when ok
};

// The ptxas used: $GI_PTXAS, $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas
// or ptxas on PATH, whichever is found first and reports NVRTC's release.
bool ptx_assembler_available();
// Why not, when it is unavailable (for `gi doctor`); the ptxas path otherwise.
std::string ptx_assembler_problem();
std::string ptx_assembler_path();

// `options` are ptxas options (e.g. "--maxrregcount=32", "-v"); `arch` is
// "sm_XX". Thread-safe; never throws.
Assembly assemble_ptx(const std::string& ptx, const std::string& arch, const std::vector<std::string>& options);

}  // namespace gi::fitness
