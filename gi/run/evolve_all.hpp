#pragma once
// `gi evolve-all`: the overnight run. Every selected seed of the library in
// turn goes through all the stages of gi/run/evolution_run.hpp (tuning, search,
// retuning, minimisation, validation, comparison, publication to
// evolved/<gpu>/), each in its own run directory under the evolve-all folder:
//
//   <out>/evolve_all.json   the plan and each kernel's status (written atomically)
//   <out>/<kernel>/         that kernel's run directory
//   <evolved>/<gpu>/failures.json   the kernels rejected or failed, with stage and error
//
// Any call may stop (a time limit of the call, a kill); the next call with
// the same folder goes on from the kernel and generation it reached, so a
// run split over many calls ends as one long run would. A kernel that fails
// (its seed fails, the GPU faults) is recorded with the stage and the error
// and the run goes on with the next.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/run/evolution_run.hpp"
#include "gi/run/shard.hpp"

namespace gi {

struct EvolveAllOptions {
  std::filesystem::path seeds_root = "seeds";
  std::string kernels = "*";  // comma-separated globs over family/kernel, e.g. "tools/*,bspline/deformation_field"
  double budget_per_kernel_minutes = 10;  // each kernel's search; its other stages come on top
  std::filesystem::path out_dir;
  EvolveOptions run;  // population, generations, run seed, families, jobs, device, caches, evolved root
  bool retry_failed = false;           // run the kernels recorded as failed or rejected again
  double max_minutes_this_call = 0;    // 0: none; else stop (resumably) at the first generation end past it
  std::function<void(const std::string&)> say;  // progress; empty: standard error
  // The GPU folder's name under the plan's evolved root ("nvidia-h100-80gb-hbm3");
  // when given, <evolved>/<gpu_slug>/failures.json lists this run's rejected
  // and failed kernels for the report. Empty: no failures.json.
  std::string gpu_slug;
  Shard shard;  // the kernels this process takes (all of them by default)
};

// One kernel's place in the plan.
struct KernelTask {
  std::string kernel;      // family/kernel
  std::string seed_dir;    // as given to the run
  std::string run_dir;     // relative to the evolve-all folder
  std::string status = "pending";  // pending, running, complete, rejected, failed
  std::string stage;       // failed: the stage that failed
  std::string error;       // failed: its message
};

// Over the whole plan, as the folder holds it at the end of the call (other
// shards may still be running theirs).
struct EvolveAllSummary {
  int complete = 0, rejected = 0, failed = 0, pending = 0;
  int shard_pending = 0;  // of this process's shard
  bool finished() const { return pending == 0; }
};

// The seeds under `root` whose family/kernel matches one of the
// comma-separated globs (*, ? and [..] as in a shell); throws naming a
// pattern that matches nothing.
std::vector<std::filesystem::path> select_seeds(const std::filesystem::path& root, const std::string& patterns);

// Runs or resumes the evolve-all in options.out_dir. `backend_for` gives the
// stages' backend for each kernel's options (gpu_backend on the device).
// Throws std::runtime_error for a damaged evolve_all.json (options that
// differ from the folder's own plan are named and ignored: the folder's plan
// is kept); anything thrown that is
// not a std::runtime_error or std::logic_error (a kernel's failure) leaves the
// plan resumable and propagates.
EvolveAllSummary evolve_all(const EvolveAllOptions& options,
                            const std::function<RunBackend(const EvolveOptions&)>& backend_for);

// "kernel 3/38 tools/sum_reduction  gen 4/50  best 1.23x  ..." for the progress line.
// With several shards the line says which ("[evolve-all 2/4] ...") and the time left is this shard's.
std::string evolve_all_progress(int index, int count, const std::string& kernel, const nlohmann::json& generation_line,
                                int generations, double kernels_left_after_this, double budget_seconds,
                                const Shard& shard = {});

}  // namespace gi
