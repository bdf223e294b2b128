#pragma once
// One launch of an emulated kernel (fitness/emulation/emulated_module.hpp)
// over a plan's buffers (fitness/emulation/host_buffers.hpp), run in a
// forked child process as the GPU worker isolates a variant: a kernel that
// crashes (an access far outside every buffer, a stack overflow, __trap)
// or never ends (killed after the time limit) fails that launch with a
// status and a message naming the block and thread, and gi goes on.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fitness/emulation/emulated_module.hpp"
#include "fitness/emulation/host_buffers.hpp"
#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness::emulation {

struct LaunchLimits {
  // Wall-clock limit of one launch (the emulator is 100 to 10000 times
  // slower than a GPU).
  std::chrono::milliseconds timeout{60000};
  std::size_t stack_bytes = 256 * 1024;  // per CUDA thread
};

struct LaunchOutcome {
  // Ok when the grid ran to its end; LaunchError (bad configuration or
  // arguments, a deadlock or collective mismatch: the message says which),
  // Timeout, IllegalAddress, Trap or LoadError otherwise.
  RunStatus status = RunStatus::Ok;
  std::string message;
  // The module global `counter_symbol` after the launch (when asked for and
  // the launch ran to its end).
  std::vector<std::uint64_t> counters;
};

// `counter_symbol`: an extern "C" array of `counters` 64-bit counters in the
// module, zeroed before the launch and read after it (branch coverage).
LaunchOutcome run_emulated_launch(const EmulatedModule& module, const LaunchPlan& plan, HostBuffers& buffers,
                                  const LaunchLimits& limits, const std::string& counter_symbol = "",
                                  std::size_t counters = 0);

}  // namespace gi::fitness::emulation
