#pragma once
// The tolerance gi init drafts for a kernel's outputs, with its reason
// (spec.json's tolerance_note): exact for integer outputs and for float
// extrema by atomics; a float sum by atomics reorders with the arrival of
// the atomics, and a float sum in a loop that warp_per_item may share among
// lanes reorders with the lanes; other float outputs get gi's default.
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/kernel_structure.hpp"

namespace gi {

// What the kernel's float outputs are, as gi init's reading of their
// roles found them.
struct FloatOutputs {
  bool atomic_sum = false;       // a float atomicAdd/atomicSub into an output
  std::string atomic_sum_where;  // the first such atomic: "line 9: atomicAdd(&sums[slice], value)"
  bool extremum = false;         // a float atomic maximum or minimum
  bool plain = false;            // a float output written or read and written
  std::string loop_sum_where;    // float_loop_sum's
};

struct ToleranceDraft {
  nlohmann::ordered_json tolerance;  // {"abs": ..., "rel": ...}
  std::string note;                  // spec.json's tolerance_note
  std::string inferred;              // the inferred line gi init prints, "" for the default
};

// "line 12: the loop sums float acc" for the first float sum in a loop of
// `kernel` that warp_per_item may share among lanes; "" for none.
std::string float_loop_sum(const grammar::ParsedKernel& k, const std::string& kernel);

ToleranceDraft draft_tolerance(const FloatOutputs& outputs);

}  // namespace gi
