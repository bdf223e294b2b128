#pragma once
// The translation unit the CPU emulator compiles with g++ for one kernel:
// the CUDA-on-CPU prelude (fitness/emulation/cuda_on_cpu.hpp, embedded in
// the binary), the kernel source rewritten where plain macros cannot reach,
// and a launcher that calls the entry with cuLaunchKernel-style arguments
// (an array of pointers to each argument's bytes; the parameter types come
// from the entry's own signature, so every scalar and pointer type works).
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gi::fitness::emulation {

// The kernel cannot be run on the CPU (inline PTX the emulator does not know).
class EmulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The text of fitness/emulation/cuda_on_cpu.hpp.
const char* cuda_on_cpu_prelude();

// The kernel source with what the prelude's macros cannot express rewritten,
// line numbers kept:
//   - `extern __shared__ T name[];` -> a `T*` into the launch's dynamic shared memory;
//   - `asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));` -> the lane id, and
//     `%%globaltimer` reads -> an increasing counter.
// Throws EmulationError naming the line for any other inline assembly.
std::string rewrite_for_cpu(std::string_view source);

// The build's project headers for g++, which has no NVRTC in-memory
// headers: each pre-include's text, then `source` with every `#include
// "NAME"` of a header in `headers` (name -> text) replaced by its text, each
// header once (as its guard or #pragma once would), `#line` directives
// keeping each line's file and number. An include of a name not there stays
// for g++ to find (a system header).
std::string with_headers_inlined(std::string_view source, const std::string& file_name,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::vector<std::string>& pre_includes);

// prelude + `#line 1 "<file_name>"` + rewrite_for_cpu(source) + launcher of `entry`.
std::string emulation_translation_unit(std::string_view source, const std::string& entry,
                                       const std::string& file_name = "kernel.cu");

}  // namespace gi::fitness::emulation
