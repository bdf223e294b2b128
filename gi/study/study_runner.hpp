#pragma once
// Runs or resumes an ablation study (gi/study/study_plan.hpp) in a folder:
//
//   <out>/study.json          the plan and every run's status (written atomically)
//   <out>/runs/<kernel>/<cell>/seed-<n>/   a normal run directory per run,
//                             plus ablation_comparison.json: the run's final
//                             kernel (what it publishes, with its tuning)
//                             against the unmodified seed at the spec's
//                             default launch, timed interleaved. Every cell
//                             is measured against that one baseline, so
//                             launch tuning shows in the speed-up.
//   <out>/evolved/            where the runs publish (never the library's evolved/)
//   <out>/study_results.json  one row per run: the numbers the statistics
//                             (scripts/report/study_stats.py) are made from
//
// A call may stop (its time limit, a kill); the next call with the same
// folder resumes the run in flight and repeats nothing. A run that fails is
// recorded with its error and the study goes on.
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gi/run/evolution_run.hpp"
#include "gi/run/shard.hpp"
#include "gi/study/study_plan.hpp"

namespace gi {

struct AblateOptions {
  std::filesystem::path study_file;
  std::filesystem::path out_dir;
  EvolveOptions run;                 // jobs, device, cache; the plan sets the search
  double max_minutes_this_call = 0;  // 0: none
  std::function<void(const std::string&)> say;  // progress; empty: standard error
  // The runs this process takes when several share the folder (ranks of
  // mpirun, Slurm tasks or array jobs: gi/run/shard.hpp); run i goes to
  // shard i mod count, and study.json is updated under a lock.
  Shard shard;
  // Cells whose runs are made again (after a fix to gi that changes what
  // they measure): their run folders are moved aside to <run>.superseded-N
  // and the runs start afresh.
  std::vector<std::string> redo_cells;
};

// The GPU parts, replaceable in tests: each run's stages, and the final
// comparison of a finished run (ComparisonResult::to_json of A = the seed
// at `seed_tuning`, B = the seed patched with `patch` at `tuning`).
struct StudyBackend {
  std::function<RunBackend(const EvolveOptions&)> run_backend;
  std::function<nlohmann::json(const Seed& seed, const fitness::KernelSpec& spec, const grammar::Patch& patch,
                               const Tuning& seed_tuning, const Tuning& tuning, const EvolveOptions& run)>
      compare;
};
StudyBackend gpu_study_backend();

struct StudySummary {
  int complete = 0, rejected = 0, failed = 0, not_applicable = 0, pending = 0;
  bool finished() const { return pending == 0; }
};

// Throws std::runtime_error for an unreadable STUDY.json or study.json, or a
// study.json whose plan differs from STUDY.json's (a study keeps its plan;
// only more repeats may be asked for, which adds the new seeds' runs).
StudySummary run_study(const AblateOptions& options, const StudyBackend& backend);

// study_results.json's rows from the run folders (also written by
// run_study): per run its cell, kernel, seed, status, the final speed-up
// over the untuned seed with its interval, evaluations and search seconds
// to the first improvement (null when none), the fraction of valid
// variants, and the evaluations and seconds of the search.
nlohmann::json collect_study_results(const std::filesystem::path& out_dir);

}  // namespace gi
