#pragma once
// One evolution run of one seed, stage by stage, each stage's result kept in
// the run directory so a later call picks up where the last one stopped:
//   tuning_seed.json  -> search (checkpoint.json) -> tuning_best.json -> minimised.json
// Post-evolution validation and results are further stages (post_evolution.hpp).
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "gi/evaluate/gpu_evaluator.hpp"
#include "gi/run/search_driver.hpp"
#include "gi/search/tuning.hpp"

namespace gi {

struct EvolveOptions {
  std::filesystem::path seed_dir;
  std::filesystem::path run_dir;
  bool resume = false;
  SearchConfig search;
  std::string families = "all";
  int jobs = 16;
  int device = 0;
  // Several GPUs of this host measure the search (one worker each,
  // gi/evaluate/gpu_evaluator.hpp); empty: `device` alone. Validation and the final
  // comparison run on the first.
  std::vector<int> devices;
  std::filesystem::path cache_dir = ".gi-cache";
  int max_generations_this_call = -1;
  bool quiet = false;
  double timing_budget_seconds = 0.5;  // per candidate during the search
  bool clock_ticks = false;            // also build every variant instrumented and log its clock ticks
  std::string rank_by = "events";      // what ranks variants: events or clock_ticks (implies clock_ticks)
  bool compile_threads = false;        // NVRTC in threads of this process, not compile servers; for comparison
  bool one_stage_compile = false;      // NVRTC straight to cubin per variant (no PTX-level reuse); for comparison
  std::filesystem::path evolved_root = "evolved";  // relative to where gi runs (the repo root)
  // Ablation (gi ablate): false keeps the spec's default block size and no
  // compile options wherever the run would tune the launch, so the result
  // is the edits' alone.
  bool launch_tuning = true;
  // Ablation: false skips the search stage (no edits; launch tuning alone).
  bool search_stage = true;
  // False skips the sweep of the winner's edit parameters after the search
  // (gi/search/parameter_sweep.hpp): the search's own choice, for ablation.
  bool parameter_sweep = true;
  // False skips compute-sanitizer in the winner's validation (held-out
  // workloads still checked): a study that cannot afford it says so.
  bool sanitizers = true;
  // Asked after every generation: true stops the run there, resumably.
  std::function<bool()> stop_requested;
  // Progress lines; empty: standard error unless quiet.
  std::function<void(const std::string&)> say;
  // Each generation's log line, after it is written (evolve-all shows its progress).
  std::function<void(const nlohmann::json&)> on_generation;
};

enum class RunOutcome {
  InProgress,  // stopped before the end (a generation limit of this call, or stop_requested); resume it
  Complete,    // every stage done and the result published
  Rejected,    // the tuned seed itself failed held-out validation or a sanitizer: nothing published
               // (a failing search winner or switch setting is set aside and the next candidate tried)
};
const char* to_string(RunOutcome outcome);

// A stage that could not be carried out: names the stage, keeps the cause's message.
class StageError : public std::runtime_error {
 public:
  StageError(std::string stage, const std::string& message)
      : std::runtime_error(message.rfind(stage + ":", 0) == 0 ? message : stage + ": " + message),
        stage_(std::move(stage)) {}
  const std::string& stage() const { return stage_; }

 private:
  std::string stage_;
};

// What the stages run on. The GPU backend makes a GpuEvaluator (with its
// worker process) for stages 1-4 and runs post_evolve (held-out validation,
// sanitizers, the interleaved comparison, publication) for stages 5-7;
// tests substitute both to run every stage without a GPU.
struct RunBackend {
  std::function<std::unique_ptr<StageEvaluator>(const Seed& seed, const fitness::KernelSpec& spec,
                                                const nlohmann::json& run_config)>
      make_evaluator;
  // Returns false when the winner is rejected.
  std::function<bool(RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                     const std::function<void(const std::string&)>& say)>
      finish;
  // Before the search's first stage, once per run: on the GPU, a seed that
  // is its own reference must pass compute-sanitizer memcheck and racecheck
  // and the branch coverage of its training set first (throws naming what
  // failed; seed_reference_checks.json in the run). Empty: nothing to check.
  std::function<void(RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                     const std::function<void(const std::string&)>& say)>
      check_seed;
};
RunBackend gpu_backend(const EvolveOptions& options);

// Runs (or resumes) the stages. Throws StageError naming the stage that
// failed (the run directory keeps every stage done before it).
RunOutcome evolve(const EvolveOptions& options, const RunBackend& backend);
RunOutcome evolve(const EvolveOptions& options);

// SearchConfig::data_every = 0 asks the run to choose: enough generations
// share a training set that making the next one (prepare_seconds, measured
// on the first) hides behind them at the target pace of 150 evaluations/s,
// at most 8 (the data still changes several times in a short run).
int auto_data_every(double prepare_seconds, int population);

// The training-data seed used for tuning (before generation 0).
std::uint64_t tuning_data_seed(std::uint64_t run_seed);

std::string progress_line(const nlohmann::json& generation_line, int generations);

}  // namespace gi
