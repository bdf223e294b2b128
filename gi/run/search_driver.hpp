#pragma once
// Runs a search generation by generation: fresh training data, evaluation of
// the seed and the proposals, one log line per evaluation and per generation,
// best-so-far beyond the noise margin, and a checkpoint after every generation.
#include <functional>

#include "gi/evaluate/evaluator.hpp"
#include "gi/run/run_directory.hpp"
#include "gi/search/search.hpp"

namespace gi {

struct DriverOptions {
  std::function<void(const nlohmann::json& generation_line)> on_generation;
  int max_generations_this_call = -1;  // stop early (the run stays resumable); -1: run to the end
  std::function<bool()> stop_requested;  // asked after every generation: true stops there (resumably)
};

// The training-data seed of a generation: depends only on the run seed and
// the generation, so a resumed run sees the same data.
std::uint64_t generation_data_seed(std::uint64_t run_seed, int generation);
// The data seed a generation's training set is made with: generations share
// a set in runs of config.data_every.
std::uint64_t training_data_seed(const SearchConfig& config, int generation);

// Starts from `state` (a fresh SearchState or one read from a checkpoint) and
// returns the state after the last generation run.
SearchState run_search(const SearchConfig& config, const EditOperators& ops, Evaluator& evaluator, RunDirectory& run,
                       SearchState state, const DriverOptions& options = {});

// Resume support: the state in a run directory's checkpoint (a fresh state if
// none was written yet), with the logs of the generation in flight dropped.
SearchState resume_state(RunDirectory& run);

}  // namespace gi
