#pragma once
// Runs kernel variants on one GPU: loads a cubin, launches it on a
// LaunchPlan's buffers, checks the outputs against the reference (with NaN
// fill, guards and input checks) and times it (events, L2 flush, spin kernel,
// adaptive sampling). One GpuRunner per process and device; after a Timeout,
// IllegalAddress or Trap the CUDA context is lost and the process must be
// replaced (see fitness/process/worker.hpp).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/workload/launch_plan.hpp"
#include "fitness/timing/timing_statistics.hpp"

namespace gi::fitness {

class CudaTimer;
class DeviceBuffers;
class L2Flush;
class SpinKernel;
class DeviceCheck;
class OutputChecker;
class OutputDigest;

// The slot of callers that keep one plan loaded (see GpuRunner::prepare).
inline const std::string kDefaultSlot = "default";

// A failed launch inside time() or time_interleaved(): the status and why.
class RunFailure : public std::runtime_error {
 public:
  RunFailure(RunStatus status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  RunStatus status() const { return status_; }

 private:
  RunStatus status_;
};

// A loaded module and its entry point; unloads the module when destroyed.
class LoadedKernel {
 public:
  LoadedKernel(LoadedKernel&& other) noexcept;
  LoadedKernel& operator=(LoadedKernel&& other) noexcept;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  ~LoadedKernel();

  const std::string& entry() const { return entry_; }
  CUfunction function() const { return function_; }
  int registers() const { return registers_; }
  int max_threads_per_block() const { return max_threads_per_block_; }

 private:
  friend class GpuRunner;
  LoadedKernel(CUmodule module, CUfunction function, std::string entry);
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::string entry_;
  int registers_ = -1;
  int max_threads_per_block_ = 0;
  // The plan constants the module's __constant__ variables hold now
  // (GpuRunner::set_constants); empty: none set.
  mutable std::string constants_set_;
};

// What a counted run (GpuRunner::run_counted) gives: the checked run's
// report and the counters the kernel left.
struct CountedRun {
  CheckReport check;
  // Empty unless the kernel ran to its end (check.status Ok, WrongOutput,
  // GuardViolation or InputModified).
  std::vector<std::uint64_t> counts;
};

struct LoadResult {
  RunStatus status = RunStatus::Ok;  // Ok or LoadError
  std::string message;               // for LoadError: the call and the CUDA error
  std::optional<LoadedKernel> kernel;
  bool ok() const { return status == RunStatus::Ok; }
};

class GpuRunner {
 public:
  // Throws CudaError (message starting "no CUDA device") when `device` cannot
  // be used.
  explicit GpuRunner(int device);
  ~GpuRunner();
  GpuRunner(const GpuRunner&) = delete;
  GpuRunner& operator=(const GpuRunner&) = delete;

  int device() const { return device_; }
  const std::string& device_name() const { return device_name_; }
  // The NVRTC target of this device, e.g. "sm_90".
  const std::string& arch() const { return arch_; }

  // How long one launch may run before it counts as a Timeout (default 10 s).
  void set_kernel_timeout(std::chrono::milliseconds timeout) { kernel_timeout_ = timeout; }
  std::chrono::milliseconds kernel_timeout() const { return kernel_timeout_; }

  // Checked runs compare outputs on the GPU (fitness/gpu/device_check) unless
  // this is set: then every output and input is read back and compared by
  // fitness/check/output_check on the host (slower; kept to test one against the other).
  void set_check_on_host(bool on_host) { check_on_host_ = on_host; }

  // False after a Timeout or a fault that lost the CUDA context: every later
  // call throws; replace the process.
  bool usable() const { return usable_; }

  // A cubin (ELF) or PTX text (NUL-terminated here if it is not); never
  // throws for a bad image.
  LoadResult load(std::span<const char> image, const std::string& entry);

  // Allocates and uploads `plan`'s buffers into `slot`, replacing what the
  // slot held. Slots stay resident side by side, each with its buffers,
  // pristine inputs and device references, so checks that alternate between
  // plans upload nothing (the worker keeps a whole training set loaded; its
  // big workload is ~100 MB and is checked every evaluation). Every call
  // below that takes a plan and a slot uploads into the slot itself when the
  // plan's buffers (names, roles, types, counts) or its input bytes (a
  // sampled 64-bit hash) differ from the slot's, and after a GuardViolation
  // or InputModified (the variant damaged what it found).
  void prepare(const LaunchPlan& plan, const std::string& slot = kDefaultSlot);
  // Frees the device memory of `slot` (nothing when it holds none).
  void release(const std::string& slot);
  // Plan uploads so far: a test that slots are reused counts them.
  std::size_t uploads() const { return uploads_; }
  // Device references found damaged (a failure the host's reference did not
  // confirm) and uploaded again; see check_on_device.
  std::size_t reference_repairs() const { return reference_repairs_; }
  // Where the device check keeps the reference values (doubles) of `buffer`
  // in `slot`, 0 when none: a test damages them to see them repaired.
  CUdeviceptr device_reference(const std::string& slot, const std::string& buffer) const;

  // NaN-fills the outputs, launches once, waits (at most the kernel
  // time-out), then checks guards, inputs and every output. The kernel comes
  // from `kernel`; entry, grid, block, shared memory and arguments from `plan`.
  // Never throws for a failure of the variant; throws std::invalid_argument
  // for a plan or reference that does not fit together.
  CheckReport run_checked(const LoadedKernel& kernel, const LaunchPlan& plan,
                          const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance,
                          const std::string& slot = kDefaultSlot);

  // A coverage run of a kernel built by instrument_branches
  // (fitness/instrument/branch_coverage.hpp): the module's __device__ array
  // `counter_symbol` (at least `counters` unsigned long longs) is zeroed,
  // the kernel runs once as in run_checked (NaN-filled outputs, checked
  // against `expected`, which may be empty: then only digested), and
  // `counters` elements are read back. Never throws for a failure of the
  // variant: a module without such an array is a LoadError, a fault or
  // time-out is reported in `check` as by run_checked.
  CountedRun run_counted(const LoadedKernel& instrumented, const LaunchPlan& plan,
                         const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance,
                         const std::string& counter_symbol, std::size_t counters);

  // The bytes buffer `name` of `plan` holds now (after run_checked: what the
  // kernel left there). For measuring run-to-run spread.
  std::vector<std::byte> buffer_bytes(const LaunchPlan& plan, const std::string& name,
                                      const std::string& slot = kDefaultSlot);

  // Adaptive timing (see TimingConfig). Throws RunFailure when a launch fails
  // or times out.
  TimingResult time(const LoadedKernel& kernel, const LaunchPlan& plan, const TimingConfig& config,
                    const std::string& slot = kDefaultSlot);

  // The second measure: `instrumented` is the variant built by
  // instrument_clock_ticks (fitness/instrument/clock_instrument.hpp); one warm-up and
  // config.min_samples launches, each prepared like a timed sample. Throws
  // RunFailure when a launch fails or times out.
  ClockTicks clock_ticks(const LoadedKernel& instrumented, const LaunchPlan& plan, const TimingConfig& config,
                         const std::string& slot = kDefaultSlot);

  // `rounds` rounds of A then B, each sample prepared alike (L2 flush, spin
  // kernel when either is short), for an interleaved seed-versus-variant ratio.
  std::vector<PairedSample> time_interleaved(const LoadedKernel& a, const LoadedKernel& b,
                                             const LaunchPlan& plan, int rounds,
                                             const TimingConfig& config,
                                             const std::string& slot = kDefaultSlot);

 private:
  // The device memory of one loaded plan.
  struct Resident {
    std::unique_ptr<DeviceBuffers> buffers;
    std::string signature;   // plan_signature of what is uploaded; empty: upload again
    std::string references;  // signature of the references on the device (DeviceCheck, by slot)
  };

  void require_usable() const;
  // The slot's memory, uploaded anew when `plan` is not what it holds.
  Resident& ensure_prepared(const LaunchPlan& plan, const std::string& slot);
  // Queues one launch on `buffers`; throws RunFailure(LaunchError) for a
  // plan that does not fit the kernel or a refused launch.
  void launch(const LoadedKernel& kernel, const LaunchPlan& plan, const DeviceBuffers& buffers,
              std::optional<CUdeviceptr> extra = std::nullopt);
  // Copies the plan's constants into the kernel's module, unless it holds
  // them already; throws RunFailure(LaunchError) naming one it lacks.
  void set_constants(const LoadedKernel& kernel, const LaunchPlan& plan);
  // Polls the stream until it is idle or the time-out passes; throws
  // RunFailure (Timeout, IllegalAddress, Trap, LaunchError) otherwise.
  void wait(const char* what);
  // Before every timed launch (events or clock ticks): InOut buffers
  // restored, L2 flushed when the config asks.
  void prepare_sample(DeviceBuffers& buffers, const TimingConfig& config);
  // One timed sample: flush, spin, events around the launch.
  double sample(const LoadedKernel& kernel, const LaunchPlan& plan, DeviceBuffers& buffers,
                const TimingConfig& config, bool spin);
  bool decide_spin(const LoadedKernel& kernel, const LaunchPlan& plan, DeviceBuffers& buffers,
                   const TimingConfig& config);
  RunFailure failure_from(const std::exception& error, const char* what);
  // Uploads the slot's references to the device unless the same ones are there.
  void ensure_references(Resident& resident, const std::string& slot, const LaunchPlan& plan,
                         const std::vector<ExpectedOutput>& expected, const std::vector<std::size_t>& indices);
  // Output buffer `b` checked (or only digested, without a reference) on the GPU.
  void check_on_device(Resident& resident, const std::string& slot, const DeviceBuffers& buffers,
                       const LaunchPlan& plan, std::size_t b,
                       const std::vector<ExpectedOutput>& expected, const std::vector<std::size_t>& indices,
                       const Tolerance& tolerance, OutputChecker& checker, OutputDigest& digest);

  int device_ = 0;
  std::string device_name_;
  std::string arch_;
  cudaStream_t stream_ = nullptr;
  std::chrono::milliseconds kernel_timeout_{10000};
  bool usable_ = true;
  std::map<std::string, Resident> residents_;
  std::size_t uploads_ = 0;
  std::size_t reference_repairs_ = 0;
  std::unique_ptr<CudaTimer> timer_;
  std::unique_ptr<L2Flush> l2_flush_;
  std::unique_ptr<SpinKernel> spin_;
  std::unique_ptr<DeviceCheck> device_check_;
  bool check_on_host_ = false;
  CUdeviceptr clock_counters_ = 0;
};

}  // namespace gi::fitness
