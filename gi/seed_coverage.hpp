#pragma once
// Branch coverage of a seed's training set, measured on the GPU: the seed
// instrumented with a counter per branch direction
// (fitness/branch_coverage.hpp), compiled as the seed is, run once on every
// training workload ("train", "train:1", ...) and the counts turned into a
// report with the spec's exemptions (fitness/coverage_report.hpp). The
// instrumented runs are checked against the reference like the seed's own:
// counting must not change what the kernel computes. `gi verify` and
// `gi coverage` use it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/branch_coverage.hpp"
#include "fitness/coverage_report.hpp"
#include "fitness/gpu_runner.hpp"
#include "fitness/kernel_spec.hpp"
#include "fitness/workload_plan.hpp"
#include "gi/evaluator.hpp"
#include "gi/seed.hpp"

namespace gi {

struct InstrumentedSeed {
  fitness::BranchInstrumentation instrumentation;
  std::optional<fitness::LoadedKernel> kernel;  // loaded on the runner; absent when `error` is set
  std::string error;                            // why it could not be instrumented, compiled or loaded
};

// The seed's source instrumented, compiled with base_compile_options() and
// the tuning's options for the runner's device (through the compile cache in
// `cache`/compile when given) and loaded. Never throws for a seed that
// cannot be instrumented, compiled or loaded: `error` says why.
InstrumentedSeed build_instrumented_seed(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                         const Tuning& tuning,
                                         const std::optional<std::filesystem::path>& cache);

struct CoverageRun {
  std::string workload;  // "train", "train:1", ...
  fitness::CountedRun run;
};

// One coverage run of `instrumented` on a prepared workload.
CoverageRun run_coverage(fitness::GpuRunner& runner, const InstrumentedSeed& instrumented,
                         const fitness::PreparedWorkload& workload);

struct SeedCoverage {
  std::optional<fitness::CoverageReport> report;  // absent when the runs could not give one
  std::vector<nlohmann::json> runs;               // per workload: its status (and message)
  std::string error;  // the instrumented seed could not be built, or a run failed its check
  bool passed() const { return error.empty() && report && report->passed(); }
  // One line: the error, or the untaken directions with their source text
  // and the report's errors; empty when passed.
  std::string failure() const;
};

// The coverage of `runs` (one per training workload of `spec`, in
// spec.training_workloads() order). A run whose check did not pass is an
// error: the counts of a kernel that faulted or computed something else
// say nothing about the seed.
SeedCoverage seed_coverage(const InstrumentedSeed& instrumented, const fitness::KernelSpec& spec,
                           const std::vector<CoverageRun>& runs);

// All of it for one seed: build, prepare every training workload with
// generator seed `generator_seed` (references cached in `cache`/reference),
// run, report. Throws only for workloads that cannot be prepared (a broken spec).
SeedCoverage measure_seed_coverage(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                   const Tuning& tuning, const std::optional<std::filesystem::path>& cache,
                                   std::uint64_t generator_seed = 0);

nlohmann::json to_json(const SeedCoverage& coverage);

}  // namespace gi
