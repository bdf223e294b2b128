#pragma once
// Functions that return the larger (or smaller) of their two arguments: the
// math library's fmaxf, fmax and max (fminf, fmin, min), and functions of the
// file written as `return a > b ? a : b;` (>=, <, <= and `? b : a` too).
// A loop that keeps `best = f(best, e)` with such an f keeps a maximum, which
// lanes can share: each lane keeps its own, and the lanes' values meet
// through f again (warp_per_item, analysis/warp_per_item_sites.hpp). Only a
// NaN can make the order matter, and then the seed's result already hung on
// the order of its loop.
#include <map>
#include <string>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

// Every such function the kernel file can call, by name: "max" or "min".
std::map<std::string, std::string> find_extremum_functions(const grammar::ParsedKernel& k);

}  // namespace gi::analysis
