#pragma once
// The stages of a run after minimisation, each persisted in the run
// directory and skipped when its file is there (so a killed run resumes):
//   validation.json  held-out workloads, run twice, digests equal; >= 16 M
//                    values over >= 5 workloads; compute-sanitizer memcheck
//                    and racecheck (gi/validation.hpp)
//   comparison.json  interleaved seed-vs-evolved timing on the training
//                    workload, each with its tuning; memory floor (gi/comparison.hpp)
//   results.json     where the result was written: evolved/<gpu>/<family>-<kernel>/
//                    (gi/results_writer.hpp)
// Inputs come from the earlier stages' files (gi/evolution_run.cpp):
// minimised.gi (the patch), minimised.json (each edit's contribution),
// tuning_seed.json and tuning_best.json ("best": the tunings), versions.json.
// A variant that fails validation or a sanitizer is not published. Such a
// winner, and one the comparison does not show faster than the tuned seed
// (shows_improvement), is moved with its records into search_best/, and the
// tuned seed itself (the empty patch at the seed's tuning) is validated,
// compared and published in its place: speed-up about 1 with its measured
// interval, and result.json's "search_best" naming what the search found and
// why it was set aside.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "fitness/kernel_spec.hpp"
#include "gi/comparison.hpp"
#include "gi/run_directory.hpp"
#include "gi/seed.hpp"

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

// Moves the search's best's records (validation, comparisons) into
// search_best/ and writes search_best/set_aside.json last. Each move is a
// rename, so a call killed part way is finished by the next: files still at
// the top are the search best's until the marker is there.
void set_search_best_aside(RunDirectory& run, const std::string& reason);
// True when the run publishes the tuned seed in place of the search's best;
// finishes a set-aside that a killed call left part way.
bool search_best_set_aside(RunDirectory& run);
// result.json's "search_best": why it was set aside, the set-aside patch and,
// when it was compared, its tuning and speed-up; when validation rejected it,
// "rejected" lists the problems.
nlohmann::json search_best_summary(const RunDirectory& run);

// Returns true when every stage is complete and the result is written;
// false when the tuned seed itself failed validation or a sanitizer
// (validation.json says why; nothing is published). Throws std::runtime_error when an earlier
// stage's file is missing or corrupt, or a stage cannot be carried out.
bool post_evolve(RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                 const std::filesystem::path& evolved_root, const PostEvolveOptions& options = {});

}  // namespace gi
