#pragma once
// Which functions of a file a kernel can reach: itself and the functions it
// calls, directly or through others, followed by name (an overloaded or
// templated name reaches every function of that name). Branch coverage
// counts only these (fitness/instrument/branch_coverage.hpp), and gi init
// keeps only these when it cuts a kernel out of a file NVRTC cannot build
// whole (gi/seed/kernel_cut.hpp).
#include <set>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::grammar {

// Per function of `k`: whether the __global__ kernel `entry` reaches it.
// Every function when no kernel of that name is in the file.
std::vector<bool> functions_reachable_from(const ParsedKernel& k, const std::string& entry);

// The identifiers the functions marked in `reached` name: the file-level
// declarations (a __constant__ variable, a texture) they may need.
std::set<std::string> names_used_by(const ParsedKernel& k, const std::vector<bool>& reached);

}  // namespace gi::grammar
