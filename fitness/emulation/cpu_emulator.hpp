#pragma once
// The CPU emulator: runs a kernel's LaunchPlan on the CPU and checks it as
// the GPU runner does (fitness/gpu/gpu_runner.hpp), returning the same
// CheckReport, so switch paths, shared-memory tiles, warp shuffles and
// atomics can be checked against the double-precision reference on the
// training-check workloads without a GPU.
//
// How: the kernel source (as gi compiles it: patch applied, switches
// resolved) is compiled with g++ behind a CUDA-on-CPU prelude
// (fitness/emulation/cuda_on_cpu.hpp) into a shared object and loaded; each
// launch runs in a forked child (fitness/emulation/emulated_launch.hpp),
// every CUDA thread a fiber, blocks one after another, deterministically.
// Buffers sit between guard regions, outputs start as the NaN fill, and the
// guards, inputs and outputs are checked with the GPU runner's rules and
// messages (fitness/check/buffer_guards.hpp, fitness/check/output_check.hpp).
//
// It is not a timing device, and it does not model memory ordering between
// blocks or warp collectives whose mask names lanes that never arrive
// (see README.md, "The CPU emulator").
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fitness/emulation/emulated_launch.hpp"
#include "fitness/emulation/emulated_module.hpp"
#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

struct EmulatorOptions {
  std::optional<std::filesystem::path> cache_dir;  // compiled kernels (<dir>/<2 hex>/<key>.so); none: not kept
  std::chrono::milliseconds timeout{60000};        // per launch
  std::size_t stack_bytes = 256 * 1024;            // per CUDA thread
  std::string compiler;                            // empty: $GI_EMULATOR_CXX, g++ or c++
};

struct EmulatedKernel {
  std::shared_ptr<const emulation::EmulatedModule> module;  // null when `error` is set
  std::string entry;
  std::string error;  // why it could not be built: the compiler's errors, unsupported inline PTX
  bool ok() const { return module != nullptr; }
};

// What one unchecked run left: the launch's status and every buffer's bytes
// (plan order) when it ran to its end.
struct EmulatedRun {
  RunStatus status = RunStatus::Ok;
  std::string message;
  std::vector<std::vector<std::byte>> buffers;
  std::vector<std::uint64_t> counters;
};

class CpuEmulator {
 public:
  explicit CpuEmulator(EmulatorOptions options = {});

  const EmulatorOptions& options() const { return options_; }
  void set_timeout(std::chrono::milliseconds timeout) { options_.timeout = timeout; }

  // Compiles `source` (a CUDA kernel file; `entry` its extern "C" __global__
  // function) for the CPU, with the build's project headers (name -> text)
  // and pre-includes as NVRTC gets them (emulation::with_headers_inlined).
  // Never throws for a kernel that does not build.
  EmulatedKernel load(std::string_view source, const std::string& entry, const std::string& file_name = "kernel.cu",
                      const std::vector<std::pair<std::string, std::string>>& headers = {},
                      const std::vector<std::string>& pre_includes = {}) const;

  // One run: outputs NaN-filled, then guards, inputs and outputs checked as
  // GpuRunner::run_checked does. Throws std::invalid_argument when
  // `expected` names a buffer the plan lacks or one that is not an output.
  CheckReport run_checked(const EmulatedKernel& kernel, const LaunchPlan& plan,
                          const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance) const;

  // run_checked on a kernel instrumented for branch coverage
  // (fitness/instrument/branch_coverage.hpp): also reads `counters` counters of
  // `counter_symbol` (zeroed before the run), as GpuRunner::run_counted.
  CountedRun run_counted(const EmulatedKernel& kernel, const LaunchPlan& plan,
                         const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance,
                         const std::string& counter_symbol, std::size_t counters) const;

  // run_checked with no expected outputs (guards and inputs checked), and
  // the bytes of every output buffer (Out and InOut, plan order) when it ran
  // to its end: what the seed, run as its own reference, leaves
  // (gi/library/seed_emulation.hpp).
  CheckReport run_for_outputs(const EmulatedKernel& kernel, const LaunchPlan& plan,
                              std::vector<std::vector<std::byte>>& outputs) const;

  // One run without a check (tests, debugging): status and buffers after it.
  EmulatedRun run(const EmulatedKernel& kernel, const LaunchPlan& plan, const std::string& counter_symbol = "",
                  std::size_t counters = 0) const;

 private:
  CountedRun checked(const EmulatedKernel& kernel, const LaunchPlan& plan, const std::vector<ExpectedOutput>& expected,
                     const Tolerance& tolerance, const std::string& counter_symbol, std::size_t counters,
                     std::vector<std::vector<std::byte>>* outputs = nullptr) const;
  EmulatorOptions options_;
};

// The emulator's name for reports (where `gi check` gives the GPU's).
inline constexpr const char* kEmulatorDeviceName = "CPU emulator";

}  // namespace gi::fitness
