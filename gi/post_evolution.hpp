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
// A variant that fails validation or a sanitizer is not published.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "fitness/kernel_spec.hpp"
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

// Returns true when every stage is complete and the result is written;
// false when the variant failed validation or a sanitizer (validation.json
// says why; nothing is published). Throws std::runtime_error when an earlier
// stage's file is missing or corrupt, or a stage cannot be carried out.
bool post_evolve(RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                 const std::filesystem::path& evolved_root, const PostEvolveOptions& options = {});

}  // namespace gi
