#pragma once
// Names a kernel reads that are neither its parameters nor its locals, as
// `gi init` meets them in an index or a guard:
//  - object-like macros of a whole number (`#define BLOCK_SIZE 16`): their
//    value is the kernel's, so an index over them is arithmetic like any;
//  - `__constant__` variables (`__constant__ int c_VoxelNumber;`): set by
//    the host with cudaMemcpyToSymbol, which no spec can do (a spec's sizes
//    are kernel parameters), so a bound over one is refused by name.
// A macro defined twice (under #ifdef, say) or #undef'd has no one value,
// and one defined by an expression (`#define NVAR (NDIM + 2)`) none gi reads.
#include <map>
#include <set>
#include <string>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct MacroValue {
  long long value = 0;
  int line = 0;
};

struct FileSymbols {
  std::map<std::string, MacroValue> integer_macros;
  std::map<std::string, int> constant_variables;  // name -> line of its declaration
  // Macros with no one whole-number value: why ("'BLOCK_SIZE' has 4
  // definitions (lines 7, 9, 11, 13): which holds depends on the build").
  std::map<std::string, std::string> macro_refusals;
};

FileSymbols file_symbols(const grammar::ParsedKernel& k);

}  // namespace gi::analysis
