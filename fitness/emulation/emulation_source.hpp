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

// prelude + `#line 1 "<file_name>"` + rewrite_for_cpu(source) + launcher of `entry`.
std::string emulation_translation_unit(std::string_view source, const std::string& entry,
                                       const std::string& file_name = "kernel.cu");

}  // namespace gi::fitness::emulation
