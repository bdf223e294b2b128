#pragma once
// The final seed-versus-evolved measurement: both kernels, each compiled and
// launched with its own tuning, timed interleaved (A B A B ...) in one
// process on the training workload, with the speed-up, its bootstrap lower
// bound, and each kernel's time as a fraction of the memory floor (the bytes
// it must move over the measured copy bandwidth). A speed-up above 10x is
// flagged for review (docs/design.md, "The fitness protocol as implemented").
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/launch_plan.hpp"
#include "fitness/timing/timing_statistics.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

inline constexpr double kReviewSpeedup = 10.0;

struct TimingSummary {
  double median_ms = 0;
  double relative_spread = 0;  // half the 95% CI of the median over the median
  double min_ms = 0, max_ms = 0;
  int samples = 0;
};

struct ComparisonResult {
  std::string gpu;                 // device name as CUDA reports it
  std::string workload = "train";
  std::uint64_t data_seed = 0;
  Tuning seed_tuning, evolved_tuning;
  std::string patch;               // the evolved patch's text
  std::string baseline_patch;      // A's patch: empty for the seed itself
  std::vector<fitness::PairedSample> samples;  // a = seed, b = evolved
  TimingSummary seed, evolved;
  double speedup = 0;              // median(seed) / median(evolved)
  double speedup_ci_low = 0;       // lower end of its 95% bootstrap interval
  double min_bytes_moved = 0;
  double bandwidth_bytes_per_s = 0;
  double memory_floor_ms = 0;      // min_bytes_moved / bandwidth
  double seed_floor_fraction = 0;  // memory_floor_ms / seed median (1: at the floor)
  double evolved_floor_fraction = 0;
  bool review = false;             // speedup > kReviewSpeedup

  nlohmann::json to_json() const;
  static ComparisonResult from_json(const nlohmann::json& j);
};

// Milliseconds to move `bytes` at `bytes_per_s`; 0 when either is not positive.
double memory_floor_ms(double bytes, double bytes_per_s);

// The arithmetic of a comparison from its samples (CPU only): medians with
// spread, speed-up and its lower bound, the floor and the fractions, the
// review flag. Throws std::invalid_argument for no samples.
ComparisonResult summarize_comparison(const std::vector<fitness::PairedSample>& pairs, double min_bytes_moved,
                                      double bandwidth_bytes_per_s);

struct ComparisonOptions {
  int device = 0;
  int rounds = 30;                 // at least 30 A B pairs
  std::uint64_t data_seed = 0;     // generator seed of the training workload
  std::optional<std::filesystem::path> cache_dir;  // compile and reference caches
  fitness::TimingConfig timing;    // flush, spin threshold; warm-up of the first pass
  std::optional<double> bandwidth_bytes_per_s;     // measured when not given
};

// Compiles both variants, checks both once on the workload (a wrong kernel
// is not timed: throws std::runtime_error saying which failed and why), then
// times them interleaved in this process. Throws "no CUDA device: ..."
// without a GPU.
ComparisonResult compare(const Seed& seed, const fitness::KernelSpec& spec, const grammar::Patch& evolved,
                         const Tuning& seed_tuning, const Tuning& evolved_tuning, const ComparisonOptions& options);
// The same with the variant built from another source (`variant`, e.g. a
// hand-written kernel with the seed's entry and parameters) patched with
// `evolved`.
ComparisonResult compare(const Seed& seed, const Seed& variant, const fitness::KernelSpec& spec,
                         const grammar::Patch& evolved, const Tuning& seed_tuning, const Tuning& evolved_tuning,
                         const ComparisonOptions& options);

// The general form: A is `seed` patched with `baseline` (e.g. the best switch
// setting without line edits), B is `variant` patched with `evolved`.
ComparisonResult compare(const Seed& seed, const grammar::Patch& baseline, const Seed& variant,
                         const fitness::KernelSpec& spec, const grammar::Patch& evolved, const Tuning& seed_tuning,
                         const Tuning& evolved_tuning, const ComparisonOptions& options);

// Several variants against one A, on one prepared workload in one process:
// each round times A, then every variant in turn, and each variant is paired
// with A's sample of its round (so a path survey of a seed's switch settings
// at several block sizes costs one data preparation). A variant that does
// not compile, load or pass the check gets `error` and no timing; A failing
// throws, as compare does.
struct ComparedVariant {
  const Seed* source = nullptr;  // the seed, or a hand-written kernel with its entry
  grammar::Patch patch;
  Tuning tuning;
};
struct ComparisonOutcome {
  ComparisonResult result;  // valid when error is empty
  std::string error;
};
std::vector<ComparisonOutcome> compare_many(const Seed& seed, const grammar::Patch& baseline,
                                            const fitness::KernelSpec& spec, const Tuning& seed_tuning,
                                            const std::vector<ComparedVariant>& variants,
                                            const ComparisonOptions& options);

// Text for people (gi bench): both medians with spread, the ratio, the floor.
std::string format_comparison(const ComparisonResult& r);

}  // namespace gi
