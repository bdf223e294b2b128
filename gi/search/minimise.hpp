#pragma once
// Patch minimisation after evolution: drop every edit whose removal is not
// slower beyond the noise margin, then measure each remaining edit's
// contribution by re-adding the edits in ranked order from the seed.
#include <vector>

#include "gi/evaluate/evaluator.hpp"

namespace gi {

struct EditContribution {
  grammar::Edit edit;
  double time_without_ms = 0;  // the minimised patch minus this edit
  double contribution = 0;     // time_without / time_of_minimised - 1 (0.1: the edit saves 10%)
  double cumulative_ms = 0;    // seed plus the edits ranked up to and including this one
};

struct MinimisedPatch {
  grammar::Patch patch;
  Evaluation eval;
  std::vector<grammar::Edit> dropped;
  std::vector<EditContribution> contributions;  // ranked, largest first
  nlohmann::json to_json() const;
};

MinimisedPatch minimise(Evaluator& evaluator, const grammar::Patch& patch, double noise_margin);

}  // namespace gi
