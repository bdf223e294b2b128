#pragma once
// Scalars that pick a mode: an integer parameter the kernel compares for
// equality with numbers (NiftyReg's resampling, `if (kernelType == 0)
// ... else if (kernelType == 1) ...`, or `switch (kernelType) { case 3: }`).
// One value takes one mode's branches only, so gi init adds a small check
// at each other value the kernel names, and the coverage check reaches
// every mode (gi/seed/spec_scaffold.cpp).
#include <map>
#include <set>
#include <string>

#include "grammar/kernel_structure.hpp"

namespace gi {

// Each of `candidates` (by-value integer parameters that size nothing) that
// the kernel's own body compares with `==`, `!=` or a `case` label, with the
// numbers it names, smallest first; none the body assigns, computes with or
// orders (`n % d == 0` compares the remainder: d is a quantity).
std::map<std::string, std::set<long long>> mode_values(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                                                      const std::set<std::string>& candidates);

}  // namespace gi
