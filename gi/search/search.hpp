#pragma once
// Search algorithms over patches: the GP of the GECCO 2014 NiftyReg work
// (default), random search and first-improvement local search (baselines for
// ablation). Each proposes one generation's patches and takes back their
// evaluations; the driver (gi/run/search_driver.hpp) evaluates, logs and checkpoints.
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/search/edit_operators.hpp"
#include "gi/evaluate/evaluation.hpp"

namespace gi {

struct SearchConfig {
  std::string algorithm = "gp";  // gp | random | local
  int population = 300;
  int generations = 50;
  std::uint64_t seed = 1;
  // A variant replaces the best only when faster by more than this fraction;
  // the driver raises it to twice the seed's measured relative spread.
  double noise_margin = 0.01;
  int max_random_edits = 5;      // random search: 1..this edits per patch
  // Generations that share one training data set (fresh inputs and
  // references): 1 makes data every generation. Where making the data takes
  // longer than evaluating a generation, a few generations share it, and the
  // next set is made while they run (gi/run/search_driver.cpp). 0: the run
  // chooses from the time a set takes to make (gi/run/evolution_run.hpp).
  int data_every = 1;
  // Seconds of search (summed over every call of a resumed run) after which
  // the search ends with the generation in progress; 0: no limit.
  double budget_seconds = 0;
};

nlohmann::json to_json(const SearchConfig& c);
SearchConfig search_config_from_json(const nlohmann::json& j);  // throws naming the field

// Everything needed to continue a run: written to the checkpoint after every generation.
struct SearchState {
  int next_generation = 0;
  std::vector<Individual> population;  // the last generation, evaluated
  std::optional<Individual> best;      // best valid variant so far (the seed at first)
  // best's time over the seed's time on the same generation's data: each
  // generation has fresh inputs (a 217^3 mask of 2.0-2.2 M voxels), so times
  // from different generations are compared through this ratio only.
  double best_relative = 1.0;
  double seed_median_ms = 0;           // the seed measured in the latest generation
  double noise_margin = 0;             // in force for this run
  std::uint64_t evaluations = 0;
  std::string rng;                     // serialised std::mt19937_64
  double search_seconds = 0;           // wall time of the generations run so far, over every call
};

// Whether the search has nothing left to do: every generation run, or its
// time budget spent.
bool search_finished(const SearchConfig& config, const SearchState& state);

nlohmann::json to_json(const SearchState& s);
SearchState search_state_from_json(const nlohmann::json& j);

class SearchAlgorithm {
 public:
  virtual ~SearchAlgorithm() = default;
  virtual std::vector<grammar::Patch> propose(const SearchState& state, std::mt19937_64& rng) = 0;
  // `evaluated` holds the proposals with their evaluations, in proposal order;
  // every algorithm here keeps the last generation as its population.
  virtual void accept(SearchState& state, std::vector<Individual> evaluated) { state.population = std::move(evaluated); }
  // Local search moves to the first improving neighbour; the others to the fittest.
  virtual bool first_improvement() const { return false; }
};

std::unique_ptr<SearchAlgorithm> make_search(const SearchConfig& config, const EditOperators& ops);

// Two-point crossover of edit lists: a's head, a slice of b, a's tail.
grammar::Patch crossover(const grammar::Patch& a, const grammar::Patch& b, std::mt19937_64& rng);

}  // namespace gi
