#pragma once
// After the search: each edit of the winner whose family has a parameter
// (coarsen's factor and order, aggregate's level, warp_per_item's group
// size, privatise's replicas, unroll's factor, a switch's value, ...) is
// tried at every other value its family offers at that site, one edit at a
// time, the others kept; a value is kept when it is faster than the patch
// so far by more than the noise margin. GP draws these values at random and
// keeps the first that helped: at a small budget it found `coarsen:2` on a
// scatter kernel where `coarsen:8` is 12% faster, and the coarsening factor
// was most of the spread between runs of intensity_minmax. The sweep is the
// last step of the search (stage 2b of gi/run/evolution_run.cpp); the
// retuning then tunes the launch for its patch.
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/evaluate/evaluator.hpp"
#include "gi/search/edit_operators.hpp"

namespace gi {

struct SweepStep {
  grammar::Edit edit;                   // the winner's edit as the step found it
  std::vector<grammar::Edit> tried;     // its alternatives, in the family's order
  std::vector<Evaluation> evaluations;  // of the patch with each alternative in its place
  int kept = -1;                        // the alternative that replaced it, or -1
};

struct SweptPatch {
  grammar::Patch patch;
  Evaluation eval;  // of `patch`, measured beside the alternatives of the last step
  std::vector<SweepStep> steps;
  int evaluations = 0;
  nlohmann::json to_json() const;
};

// Sweeps `winner`'s parameters (at the evaluator's current data and tuning),
// at most `max_evaluations` variants in all. Throws std::runtime_error when
// `winner` itself is not valid.
SweptPatch sweep_parameters(Evaluator& evaluator, const EditOperators& ops, const grammar::Patch& winner,
                            double noise_margin, int max_evaluations = 96);

}  // namespace gi
