#pragma once
// Names a kernel reads that are neither its parameters nor its locals, as
// `gi init` meets them in an index or a guard:
//  - object-like macros of a whole number (`#define BLOCK_SIZE 16`): their
//    value is the kernel's, so an index over them is arithmetic like any;
//  - `__constant__` variables (`__constant__ int c_VoxelNumber;`): set by
//    the host with cudaMemcpyToSymbol; a spec sets the scalar ones
//    ("constants"), so an integer one is a size like a scalar parameter, and
//    a bound over any other (an array, an int3) is refused by name.
// A macro defined by a whole-number constant expression of numbers and other
// such macros (`#define NVAR (NDIM + 2)`) is its value too. A macro defined
// twice (under #ifdef, say) or #undef'd has no one value, and one defined by
// anything else (a cast, a float, a function-like macro) none gi reads.
#include <map>
#include <set>
#include <string>

#include "grammar/constant_variables.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct MacroValue {
  long long value = 0;
  int line = 0;
};

struct FileSymbols {
  std::map<std::string, MacroValue> integer_macros;
  std::map<std::string, grammar::ConstantVariable> constant_variables;
  // Macros with no one whole-number value: why ("'BLOCK_SIZE' has 4
  // definitions (lines 7, 9, 11, 13): which holds depends on the build").
  std::map<std::string, std::string> macro_refusals;
};

FileSymbols file_symbols(const grammar::ParsedKernel& k);

}  // namespace gi::analysis
