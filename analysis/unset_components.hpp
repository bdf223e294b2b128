#pragma once
// Outputs whose vector elements the kernel leaves partly undefined. NiftyReg
// writes a gradient so:
//
//   float4 realGradient;                 // no value
//   realGradient.x = ...; realGradient.y = ...; realGradient.z = ...;
//   gradient[tid] = realGradient;        // .w is whatever the register held
//
// The stored .w differs between builds (the plain and the instrumented one,
// a variant and the seed) and means nothing, so the output check must leave
// it out: a spec's "checked_components". Found for a local of a CUDA vector
// type declared without a value, set member by member, never assigned whole,
// its address never taken nor handed to a function, and stored whole into a
// pointer parameter (`p[i] = local;`).
#include <map>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct UnsetComponents {
  std::vector<int> set;  // the components the kernel sets (0 = x, ... 3 = w), ascending
  std::string evidence;  // "line 107: 'realGradient' is declared without a value; the kernel sets .x .y .z (...)"
};

// Pointer parameter name -> the components its stores define, for each
// parameter some store leaves partly undefined (several such stores: the
// components all of them set).
std::map<std::string, UnsetComponents> unset_components(const grammar::ParsedKernel& k,
                                                        const grammar::Function& kernel);

}  // namespace gi::analysis
