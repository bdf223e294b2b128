#pragma once
// One evolution run of one seed, stage by stage, each stage's result kept in
// the run directory so a later call picks up where the last one stopped:
//   tuning_seed.json  -> search (checkpoint.json) -> tuning_best.json -> minimised.json
// Post-evolution validation and results are further stages (post_evolution.hpp).
#include <filesystem>
#include <optional>

#include "gi/gpu_evaluator.hpp"
#include "gi/search_driver.hpp"
#include "gi/tuning.hpp"

namespace gi {

struct EvolveOptions {
  std::filesystem::path seed_dir;
  std::filesystem::path run_dir;
  bool resume = false;
  SearchConfig search;
  std::string families = "all";
  int jobs = 16;
  int device = 0;
  std::filesystem::path cache_dir = ".gi-cache";
  int max_generations_this_call = -1;
  bool quiet = false;
  double timing_budget_seconds = 0.5;  // per candidate during the search
  bool clock_ticks = false;            // also build every variant instrumented and log its clock ticks
  std::string rank_by = "events";      // what ranks variants: events or clock_ticks (implies clock_ticks)
  bool compile_threads = false;        // NVRTC in threads of this process, not compile servers; for comparison
  bool one_stage_compile = false;      // NVRTC straight to cubin per variant (no PTX-level reuse); for comparison
  std::filesystem::path evolved_root = "evolved";  // relative to where gi runs (the repo root)
};

// Runs (or resumes) the stages; returns true when every stage is complete.
bool evolve(const EvolveOptions& options);

// The training-data seed used for tuning (before generation 0).
std::uint64_t tuning_data_seed(std::uint64_t run_seed);

std::string progress_line(const nlohmann::json& generation_line, int generations);

}  // namespace gi
