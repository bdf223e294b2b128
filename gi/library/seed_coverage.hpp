#pragma once
// Branch coverage of a seed's training set, measured on the GPU: the seed
// instrumented with a counter per branch direction
// (fitness/instrument/branch_coverage.hpp), compiled as the seed is, run once on every
// training workload ("train", "train:1", ...) and the counts turned into a
// report with the spec's exemptions (fitness/check/coverage_report.hpp). The
// instrumented runs are checked against the reference like the seed's own:
// counting must not change what the kernel computes. `gi verify` and
// `gi coverage` use it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/instrument/branch_coverage.hpp"
#include "fitness/check/coverage_report.hpp"
#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "gi/seed/seed.hpp"
#include "gi/seed/switch_settings.hpp"

namespace gi {

struct InstrumentedSeed {
  fitness::BranchInstrumentation instrumentation;
  std::optional<fitness::LoadedKernel> kernel;  // loaded on the runner; absent when `error` is set
  std::string error;                            // why it could not be instrumented, compiled or loaded
};

// The seed's source under `setting` (its define edits applied, every path
// kept, so branch keys are kernel.cu's lines and columns) instrumented,
// compiled with base_compile_options() and the tuning's options for the
// runner's device (through the compile cache in `cache`/compile when given)
// and loaded. Never throws for a seed that cannot be instrumented, compiled
// or loaded: `error` says why.
InstrumentedSeed build_instrumented_seed(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                         const Tuning& tuning,
                                         const std::optional<std::filesystem::path>& cache,
                                         const SwitchSetting& setting = {});

struct CoverageRun {
  std::string workload;  // "train", "train:1", ...; "train@BSPLINE_PATH=1" for another switch setting
  fitness::CountedRun run;
};

// "train" at the default setting, "train@BSPLINE_PATH=1" at another.
std::string coverage_workload_name(const std::string& which, const SwitchSetting& setting);

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

// The coverage of `runs`: one per training workload of `spec` and switch
// setting, settings in `settings` order, workloads in
// spec.training_workloads() order within each. A direction of a switch path
// is counted only where that path is compiled in, so across settings every
// path's directions are measured where they live. A run whose check did not
// pass is an error: the counts of a kernel that faulted or computed
// something else say nothing about the seed.
SeedCoverage seed_coverage(const InstrumentedSeed& instrumented, const fitness::KernelSpec& spec,
                           const std::vector<CoverageRun>& runs,
                           const std::vector<SwitchSetting>& settings = {SwitchSetting{}});

// All of it for one seed, at every switch setting: build, prepare every
// training workload with generator seed `generator_seed` (references cached
// in `cache`/reference), run, report. Throws only for workloads that cannot
// be prepared (a broken spec).
SeedCoverage measure_seed_coverage(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                   const Tuning& tuning, const std::optional<std::filesystem::path>& cache,
                                   std::uint64_t generator_seed = 0);

nlohmann::json to_json(const SeedCoverage& coverage);

}  // namespace gi
