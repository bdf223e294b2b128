#pragma once
// Which functions of a file a kernel can reach: itself and the functions it
// calls, directly or through others, followed by name: a call reaches the
// overloads of its name that take its number of arguments (NiftyReg's 2-D
// kernel calls GetSlidedValues(x, y), not the 3-D GetSlidedValues(x, y, z)),
// and every overload where none does or where the name is no plain call (a
// template's `f<T>(...)`, a function's address). Branch coverage
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
// `every_overload`: a call reaches every function of its name, whatever it
// passes (the texture port, which gives helpers a parameter and so changes
// which overload a call's arguments pick: each must be ported alike).
std::vector<bool> functions_reachable_from(const ParsedKernel& k, const std::string& entry, bool every_overload = false);

// The identifiers the functions marked in `reached` name: the file-level
// declarations (a __constant__ variable, a texture) they may need.
std::set<std::string> names_used_by(const ParsedKernel& k, const std::vector<bool>& reached);

}  // namespace gi::grammar
