#pragma once
// Block size and compile-option tuning of one patch (the seed before
// evolution, the winner after it): every combination is measured and the
// fastest valid one is kept.
#include <vector>

#include "gi/evaluate/evaluator.hpp"

namespace gi {

struct TuningSpace {
  std::vector<unsigned> block_sizes{64, 128, 256, 512, 1024};
  std::vector<std::vector<std::string>> option_sets{{}};
};

struct TuningTrial {
  Tuning tuning;
  Evaluation eval;
};

struct TuningResult {
  Tuning best;
  Evaluation best_eval;
  std::vector<TuningTrial> trials;
  nlohmann::json to_json() const;
};

// Throws if no combination gives a valid variant.
TuningResult tune(Evaluator& evaluator, const grammar::Patch& patch, const TuningSpace& space);

}  // namespace gi
