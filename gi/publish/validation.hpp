#pragma once
// Validation of the final evolved kernel on held-out data (docs/design.md,
// "The fitness protocol as implemented"): every validation workload of the spec is checked
// twice in an isolated worker process; both runs must pass and leave
// bit-identical outputs (equal output digests), the workloads together must
// hold at least 16 million checked output values in at least 5 workloads,
// and the kernel is run under compute-sanitizer memcheck and racecheck
// (`gi check` on one validation workload).
//
// Kernels whose outputs legitimately vary run to run (float atomics) may
// leave different digests where two runs of the plain seed do too; both runs
// must still be within tolerance (judge_workload).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/launch_plan.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

inline constexpr std::size_t kMinValidationValues = 16'000'000;
inline constexpr std::size_t kMinValidationWorkloads = 5;

// One held-out workload, run twice.
struct WorkloadCheck {
  std::string which;                // "validate:2"
  std::size_t values_checked = 0;   // output values compared (first run)
  std::size_t input_values = 0;     // values of the input buffers (every output of a reduction depends on them)
  fitness::CheckReport first, second;
  bool identical = false;           // both digests present and equal
  // The two runs differ, and so do two runs of the plain seed on the same
  // data: float atomics whose order changes from run to run (sums,
  // histograms). Both runs passed the check against the reference.
  bool varies_like_seed = false;
  bool passed = false;
  std::string message;              // why it failed, or for varies_like_seed what differed
};

// Both runs ok, both digests present and equal (CPU only). With
// `seed_varies` (two runs of the plain seed on this workload left different
// outputs) different digests pass too: the run-to-run spread of float
// atomics is the seed's own, and each run is checked against the reference.
WorkloadCheck judge_workload(std::string which, fitness::CheckReport first, fitness::CheckReport second,
                             bool seed_varies = false);
// A workload that could not be run at all (generation, plan or worker failure).
WorkloadCheck failed_workload(std::string which, std::string message);

struct SanitizerResult {
  std::string tool;                 // "memcheck", "racecheck", "synccheck", "initcheck"
  // "passed", "failed", "timed out", "skipped", "not run", or "not needed"
  // (synccheck and initcheck of a variant that adds no barrier and no shared memory)
  std::string status = "not run";
  std::string workload;             // the validation workload it ran on
  std::string summary;              // the tool's summary line ("ERROR SUMMARY: 0 errors")
  std::string reason;               // for skipped / failed / timed out: why
  int exit_code = -1;
  double seconds = 0;
  std::string command;
  std::string output_tail;          // the end of what it printed, for a failure

  bool passed() const { return status == "passed"; }
  // Passed, or a check the variant does not need.
  bool clear() const { return passed() || status == "not needed"; }
  nlohmann::json to_json() const;
  static SanitizerResult from_json(const nlohmann::json& j);
};

struct ValidationResult {
  std::vector<WorkloadCheck> workloads;
  std::size_t output_values = 0;    // summed over the workloads
  // Input values summed over the workloads. A kernel with few outputs (a
  // sum, a histogram, node gradients) meets the size requirement through the
  // inputs its outputs depend on: kMinValidationValues of either.
  std::size_t input_values = 0;
  double max_abs_error = 0, max_rel_error = 0;  // over all workloads and runs
  bool passed = false;              // every workload passed, with enough values and workloads
  std::vector<std::string> problems;
  SanitizerResult memcheck, racecheck;
  // Run when the variant adds a barrier or shared memory to the seed (a
  // transformation family's block reduction or private copy): a barrier some
  // threads miss, shared memory read before it is written.
  SanitizerResult synccheck, initcheck;

  // The four, in the order they run.
  std::vector<const SanitizerResult*> sanitizers() const { return {&memcheck, &racecheck, &synccheck, &initcheck}; }
  // Correctness and every sanitizer passed (a skipped sanitizer is not a pass).
  bool fully_passed() const {
    for (const SanitizerResult* s : sanitizers())
      if (!s->clear()) return false;
    return passed;
  }
  nlohmann::json to_json() const;
  static ValidationResult from_json(const nlohmann::json& j);
};

// Totals, maxima, `passed` and `problems` from `r.workloads` (CPU only).
void summarize_validation(ValidationResult& r);

// ---- compute-sanitizer ----------------------------------------------------

// On PATH, else $CUDA_HOME/bin, else /usr/local/cuda/bin.
std::optional<std::filesystem::path> find_compute_sanitizer();
// The tool's last "... SUMMARY: ..." line without its "========= " prefix;
// empty when there is none.
std::string sanitizer_summary_line(std::string_view output);
// passed only for exit code 0 with a summary line; 124 / 137 (from
// `timeout`) are "timed out".
SanitizerResult judge_sanitizer(const std::string& tool, int exit_code, const std::string& output);
// The workload a sanitizer runs on: memcheck slows a kernel ~100x, so the
// smallest one, but one with at least `min_values` checked values so the
// kernel's general (interior) path runs, not only its boundary cases; the
// largest when none has that many. Returns an index; throws for none.
std::size_t pick_sanitizer_workload(const std::vector<std::size_t>& checked_values, std::size_t min_values);
// 'text' for /bin/sh.
std::string shell_quote(const std::string& text);

// ---- the whole validation -------------------------------------------------

struct ValidationOptions {
  std::filesystem::path gi_binary;  // runs `gi worker` (the checks) and `gi check` (under the sanitizers)
  int device = 0;
  std::optional<std::filesystem::path> cache_dir;  // compile and reference caches, scratch files
  std::uint64_t data_seed = 0;      // 0: the canonical held-out data
  std::chrono::milliseconds kernel_timeout{10000};
  bool sanitizers = true;
  std::chrono::seconds sanitizer_timeout{900};
  std::size_t sanitizer_min_values = std::size_t{1} << 20;
  std::function<void(const std::string&)> log;  // progress lines; none when empty
};

// Whether the variant's source has more barriers or shared memory
// declarations than the seed's (both with switches resolved): then
// synccheck and initcheck run too.
bool adds_barriers_or_shared_memory(const std::string& seed_source, const std::string& variant_source);

// compute-sanitizer `tool` (memcheck, racecheck, synccheck, initcheck) on `gi check` of the
// variant on one workload, in a process of its own; scratch holds the patch
// file. "skipped" when the tool is not installed.
SanitizerResult run_sanitizer(const std::string& tool, const Seed& seed, const grammar::Patch& patch,
                              const Tuning& tuning, const std::string& workload, const ValidationOptions& options,
                              const std::filesystem::path& scratch);

// Never throws for a failure of the variant (it is reported); throws for a
// patch that does not apply or a gi binary that cannot be started.
ValidationResult validate(const Seed& seed, const fitness::KernelSpec& spec, const grammar::Patch& patch,
                          const Tuning& tuning, const ValidationOptions& options);

}  // namespace gi
