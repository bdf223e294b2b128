#pragma once
// Fitness on the GPU: patches -> sources -> parallel NVRTC compiles (cached by
// content) -> each distinct variant checked and timed by an isolated worker
// process on this generation's data. Identical variants in a batch are
// compiled and measured once ("cached"); variants whose sources differ but
// whose binaries are identical are measured once ("same_binary").
//
// The data is a whole training set (spec.training_workloads()): "train",
// whose time ranks variants, and the small "train:N" workloads that drive
// borders, padding and masks the big one never reaches. All of them are
// made afresh each generation and stay loaded in the worker, one slot each;
// a variant is checked on every one (the timed workload first), timed on
// "train" only, and the first failure decides its status and names the
// workload (Evaluation::failed_workload).
//
// Several GPUs of one host (GpuEvaluatorConfig::devices): one worker each,
// every one loaded with the same training set, and a batch's distinct
// binaries measured by whichever worker is free. The seed is timed on every
// GPU in each batch, and a variant's median is scaled by its own GPU's seed
// time (median_ms = its time x seed on the first GPU / seed on its GPU), so
// variants are compared only through measurements of the GPU they ran on;
// Evaluation::device and device_median_ms keep what was measured.
#include <array>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/process/worker.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

struct GpuEvaluatorConfig {
  std::filesystem::path worker_executable;  // the gi binary (runs `gi worker`)
  // Arguments of the worker; empty: {"worker", "--device", device}. Tests
  // point the evaluator at a stand-in worker this way.
  // "{device}" in an argument stands for the worker's device.
  std::vector<std::string> worker_args;
  int device = 0;
  // GPUs to measure on, one worker each; empty: `device` alone. The first
  // is the one every time is expressed on (see above).
  std::vector<int> devices;
  int jobs = 16;                            // parallel NVRTC compiles
  std::filesystem::path cache_dir;          // compile cache, reference cache, plan files
  std::string arch;  // NVRTC target; empty: the device's own (device_arch)
  fitness::TimingConfig timing;
  // A launch longer than this multiple of the seed's time is a time-out,
  // with a floor for launches the seed's time does not cover (the first
  // one loads the module; a sample also restores buffers and flushes L2).
  // The floor was 2 s: a variant that hangs holds its whole generation for
  // it, and 6 hung variants took 65% of a 2,020-evaluation B-spline search
  // whose seed runs in 0.08 ms (bench/multi_gpu/results_2026-11-26.md).
  double timeout_factor = 50;
  std::chrono::milliseconds min_kernel_timeout{250};
  // With timing.clock_ticks every variant is also built instrumented and its
  // clock ticks logged; this makes them, not the event time, rank variants.
  bool rank_by_clock_ticks = false;
  // NVRTC to PTX, then ptxas once per distinct PTX (fitness/compile/ptx_assembler);
  // false: one NVRTC call per variant straight to the cubin.
  bool two_stage_compile = true;
  // NVRTC calls on `jobs` compile-server processes (`gi nvrtc-serve`), not
  // threads of this one: NVRTC scales about three times better over processes.
  bool compile_processes = true;
};

// How a variant is launched on one workload.
struct LaunchGeometry {
  std::array<unsigned, 3> block{1, 1, 1}, grid{1, 1, 1};
  std::size_t shared_bytes = 0;  // dynamic shared memory
};

// The launch geometry of a variant on a workload: the spec's launch
// expressions over the workload's derived variables, the block size and the
// variant's launch effect (switch values, thread coarsening). Every launch
// the evaluator asks for is computed here and nowhere else. Throws
// std::runtime_error naming the spec and the launch field.
LaunchGeometry variant_launch_geometry(const fitness::KernelSpec& spec, const std::map<std::string, double>& variables,
                                       unsigned block_size, const grammar::LaunchEffect& launch = {});

class GpuEvaluator : public StageEvaluator {
 public:
  GpuEvaluator(const Seed& seed, const fitness::KernelSpec& spec, GpuEvaluatorConfig config);
  ~GpuEvaluator() override;

  void begin_generation(int generation, std::uint64_t data_seed) override;
  void prefetch_generation(int generation, std::uint64_t data_seed) override;
  void set_tuning(const Tuning& tuning) override { tuning_ = tuning; }
  std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) override;

  // Loads workloads made with a given generator seed into the worker:
  // "train" means the whole training set (what begin_generation loads);
  // any other name ("validate:N", "train:N") that one workload alone, which
  // is then both checked and timed. Tuning, minimisation and comparison use
  // it. Throws std::runtime_error naming the workload when one cannot be
  // made or loaded (then nothing is loaded).
  void use_workload(const std::string& which, std::uint64_t data_seed) override;
  // The timed workload of what is loaded (its inputs and references are in
  // the worker only).
  const fitness::PreparedWorkload& workload() const;
  // The workloads loaded, the timed one first.
  std::vector<std::string> workload_names() const;
  const Tuning& tuning() const { return tuning_; }
  // The seed's median on the current data sets the time-out of later launches.
  void set_seed_time(double ms) override { seed_ms_ = ms; }
  EvaluatorStats stats() const override { return stats_; }

 private:
  // Checks and times one binary on worker `w` (a raw time: not scaled).
  Evaluation measure(const fitness::CompileResult& compiled, const fitness::CompileResult* clock,
                     const grammar::LaunchEffect& launch, std::size_t w = 0);
  // Writes the binary where worker `w` reads it (scratch/w<w>-<key>.cubin).
  std::filesystem::path stage_cubin(const fitness::CompileResult& compiled, std::size_t w) const;
  // The distinct binaries of a batch, in compile order, measured one after
  // the other on the one worker, or by whichever of several workers is free.
  void measure_batch(const std::vector<std::size_t>& distinct, std::vector<std::future<fitness::CompileResult>>& plain,
                     std::vector<std::future<fitness::CompileResult>>& clocked,
                     const std::vector<grammar::LaunchEffect>& launches, const std::vector<std::string>& keys,
                     std::vector<Evaluation>& results, std::chrono::steady_clock::time_point compile_start);
  // With several workers: the seed timed on each under this batch's tuning,
  // for scale(). False when it fails on one: a tuning candidate the seed
  // cannot launch with (a block too large for its registers) leaves nothing
  // to compare the GPUs by, and that batch is measured on the first alone.
  bool time_seed_on_every_worker();
  // A raw measurement on worker `w` expressed on the first worker's scale
  // (the first's own measurements keep theirs), naming the GPU it ran on.
  void scale(Evaluation& e, std::size_t w) const;
  // The clock-tick build of a plain request (fitness/instrument/clock_instrument.hpp).
  fitness::CompileRequest clock_request(const fitness::CompileRequest& plain) const;

  // One workload of a set, with its plan file written (the worker reads it
  // to load and again after a restart, so it lives as long as the slot).
  struct LoadedWorkload {
    std::string name;  // the workload and its worker slot: "train", "train:2"
    std::string purpose;
    std::filesystem::path plan_file;
    std::unique_ptr<fitness::PreparedWorkload> workload;
  };
  // The workloads of one use_workload call, made off the search thread.
  struct Prepared {
    std::string which;
    std::uint64_t data_seed = 0;
    unsigned block_size = 0;
    std::vector<LoadedWorkload> workloads;  // the timed one first
  };
  // The workload names `which` stands for (see use_workload).
  std::vector<std::string> workload_set(const std::string& which) const;
  std::future<Prepared> prepare_async(const std::string& which, std::uint64_t data_seed, bool cache_references);
  // use_workload, with or without the disk cache of references.
  void load_workloads(const std::string& which, std::uint64_t data_seed, bool cache_references);
  // "train:2 (what it drives)", for messages.
  std::string describe_workload(const std::string& name) const;

  const Seed& seed_;
  const fitness::KernelSpec& spec_;
  GpuEvaluatorConfig config_;
  fitness::Compiler compiler_;
  std::vector<int> devices_;  // one per worker
  std::vector<std::unique_ptr<fitness::WorkerProcess>> workers_;
  std::vector<Evaluation> seed_on_worker_;  // the seed's raw time on each worker (several workers only)
  std::vector<LoadedWorkload> loaded_;  // in the worker, the timed one first
  std::string loaded_which_;            // what loaded_ was made as (use_workload's arguments)
  std::uint64_t loaded_data_seed_ = 0;
  unsigned loaded_block_size_ = 0;
  std::filesystem::path scratch_;  // plan and cubin files for the worker
  unsigned plan_files_made_ = 0;   // plan files are never overwritten while the worker may replay them
  Tuning tuning_;
  double seed_ms_ = 0;
  EvaluatorStats stats_;
  std::mutex stats_mutex_;  // measure() runs on several threads with several workers
  std::future<Prepared> prefetch_;  // the next generation's training data, being made
};

EvalStatus eval_status_of(fitness::RunStatus s);

}  // namespace gi
