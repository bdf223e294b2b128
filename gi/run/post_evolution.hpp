#pragma once
// The stages of a run after minimisation, each persisted in the run
// directory and skipped when its file is there (so a killed run resumes):
//   validation.json  held-out workloads, run twice, digests equal; >= 16 M
//                    values over >= 5 workloads; compute-sanitizer memcheck
//                    and racecheck (gi/publish/validation.hpp)
//   comparison.json  interleaved seed-vs-evolved timing on the training
//                    workload, each with its tuning; memory floor (gi/publish/comparison.hpp)
//   results.json     where the result was written: evolved/<gpu>/<family>-<kernel>/
//                    (gi/publish/results_writer.hpp)
// Inputs come from the earlier stages' files (gi/run/evolution_run.cpp):
// minimised.gi (the patch), minimised.json (each edit's contribution),
// tuning_seed.json and tuning_best.json ("best": the tunings), versions.json.
// A variant that fails validation or a sanitizer is not published. Such a
// winner, and one the comparison does not show faster than the tuned seed
// (shows_improvement), is moved with its records into search_best/, and the
// next candidate is validated, compared and published in its place: the
// seed's best switch setting without line edits (seeds with switches; moved
// into switch_best/ when it fails in turn), then the tuned seed itself (the
// empty patch at the seed's tuning: speed-up about 1 with its measured
// interval). result.json's "search_best" (and "switch_best") name what was
// set aside and why, "kept" what was published instead. (The H200's
// max_vector_length winner failed validation while its best switch setting
// alone was 5x the tuned seed: publishing the tuned seed threw that away.)
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/publish/comparison.hpp"
#include "gi/run/run_directory.hpp"
#include "gi/seed/seed.hpp"
#include "gi/evaluate/evaluator.hpp"

namespace gi {

struct PostEvolveOptions {
  std::filesystem::path gi_binary;     // runs `gi worker` and `gi check`; empty: this executable
  int device = 0;
  std::filesystem::path cache_dir = ".gi-cache";  // compile and reference caches
  std::uint64_t train_data_seed = 0;   // the comparison's training data (evolve: tuning_data_seed(search.seed))
  int rounds = 30;                     // A B rounds of the comparison
  bool sanitizers = true;
  std::chrono::seconds sanitizer_timeout{900};  // each compute-sanitizer run
  std::function<void(const std::string&)> say;  // progress lines; none when empty
};

// The rule for publishing a patch: the 95% bootstrap lower bound of its
// speed-up over the tuned seed is above 1.
bool shows_improvement(const ComparisonResult& c);

// What publication may publish, in the order it tries them.
struct PublishCandidate {
  std::string name;       // "the winner", "the best switch setting", "the tuned seed", ...
  std::string aside_dir;  // where its records go when it is set aside; empty for the last
  grammar::Patch patch;
  Tuning tuning;
  // The seed itself, at a tuning: measured against itself, so kept without
  // being shown faster; only a failed validation sets it aside.
  bool is_seed = false;
};
// The winner (the minimised patch at the search's tuning), the best switch
// setting of switch_baseline.json when the run has one, it is not the seed's
// own and it differs from the winner, and the tuned seed. Where the seed's
// tuning chose compiler options (--use_fast_math), they passed the training
// checks but may fail the held-out workloads: the seed at the same block
// size without them is the last candidate.
std::vector<PublishCandidate> publish_candidates(const RunDirectory& run, const grammar::Patch& search_patch,
                                                 const Tuning& search_tuning, const Tuning& seed_tuning);

// Moves a candidate's records (validation, comparisons) into `dir` and
// writes dir/set_aside.json last. Each move is a rename, so a call killed
// part way is finished by the next: files still at the top are that
// candidate's until the marker is there.
void set_aside(RunDirectory& run, const std::string& dir, const std::string& reason);
// True when the candidate of `dir` has been set aside; finishes a set-aside
// that a killed call left part way.
bool is_set_aside(RunDirectory& run, const std::string& dir);
// Why the records at the top of the run (validation.json, comparison.json)
// are another candidate's, or nullopt when they are this one's or absent: a
// run published under an older rule and then published again. post_evolve
// moves such records into superseded-N/ (with why.json) and starts afresh.
std::optional<std::string> stale_records(const RunDirectory& run, const PublishCandidate& candidate);

// result.json's "search_best" / "switch_best": why the candidate was set
// aside, its patch and, when it was compared, its tuning and speed-up; when
// validation rejected it, its tuning and "rejected" listing the problems.
nlohmann::json set_aside_summary(const RunDirectory& run, const PublishCandidate& candidate);

// Returns true when every stage is complete and the result is written;
// false when the tuned seed itself failed validation or a sanitizer
// (validation.json says why; nothing is published). Throws std::runtime_error when an earlier
// stage's file is missing or corrupt, or a stage cannot be carried out.
bool post_evolve(RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                 const std::filesystem::path& evolved_root, const PostEvolveOptions& options = {});

}  // namespace gi
