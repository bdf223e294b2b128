#pragma once
// Small checks that take branch directions the drafted workloads miss. gi
// init draws float inputs from uniform(-1, 1), so a branch on the sign of a
// loaded value goes both ways element by element, but a branch on "no value
// in the window is negative" (NiftyReg's folding correction: a node's 27
// Jacobian determinants all positive, the common case in a registration)
// almost never does. When `gi init --check` finds directions no workload
// takes, it tries these candidates one at a time as an extra small check
// and keeps the first with which coverage passes: the drafted small check
// with every default float input positive, negative, or zero. Inputs the
// user gave (`--like`) or that start at an atomic's identity keep theirs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi {

struct CoverageCheck {
  std::string description;      // "every float input in uniform(0.5, 1.5)"
  nlohmann::ordered_json check;  // a train_checks entry
};

// Empty when the spec has no small check or no float input drawn from the default.
std::vector<CoverageCheck> one_sign_checks(const nlohmann::ordered_json& spec);

}  // namespace gi
