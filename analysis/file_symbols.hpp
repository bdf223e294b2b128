#pragma once
// Names a kernel reads that are neither its parameters nor its locals, as
// `gi init` meets them in an index or a guard:
//  - object-like macros of a whole number (`#define BLOCK_SIZE 16`): their
//    value is the kernel's, so an index over them is arithmetic like any;
//  - file-scope whole-number constants (`const int threads_per_block = 512;`,
//    constexpr): kept with the macros, as their value is as fixed;
//  - function-like macros (`#define IDX2C(i, j, ld) (((j) * (ld)) + (i))`):
//    a use is its expansion (analysis/macro_expansion.hpp);
//  - `__constant__` variables (`__constant__ int c_VoxelNumber;`): set by
//    the host with cudaMemcpyToSymbol; a spec sets the scalar ones
//    ("constants"), so an integer one is a size like a scalar parameter, and
//    a bound over any other (an array, an int3) is refused by name.
// Macros come from the file and from the local headers it includes (read by
// the caller), in the default build (analysis/default_build.hpp): a block
// size chosen by `#ifdef RD_WG_SIZE ... #else 16` is 16. A macro defined by a
// whole-number constant expression of numbers and other such macros
// (`#define NVAR (NDIM + 2)`) is its value too. One whose definition depends
// on a condition gi cannot decide has no one value, and one defined by
// anything else (a cast, a float) none gi reads.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/default_build.hpp"
#include "grammar/constant_variables.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct MacroValue {
  long long value = 0;
  int line = 0;
  std::string file;          // "" for the kernel's file, else the header's name
  bool conditional = false;  // chosen by a conditional the default build decides
  // "line 13", "srad.h line 3"; ", in a build without -D options" added
  // where a conditional chose it.
  std::string where() const;
};

struct FunctionMacro {
  std::vector<std::string> params;
  std::string body;
  std::string where;  // "line 4", "optimizeKernel.h line 12"
};

// A local header gi could parse: its name as included and its functions.
struct HeaderCode {
  std::string name;
  grammar::ParsedKernel code;
};

// The local headers' directive lines, in include order, as the caller read
// them; `complete` when every local header the file includes is there.
struct IncludedHeaders {
  std::vector<DirectiveLine> lines;
  bool complete = false;
  // Each header read, in include order (a header's own includes before it):
  // where gi looks for the structs and device functions the kernel names.
  std::shared_ptr<const std::vector<grammar::SourceFile>> files;
  // Those gi could parse (grammar/kernel_structure.hpp), in the same order:
  // where the analyses find a __device__ helper the kernel calls but its
  // file does not define (NiftyReg's SquareDistance3d in Maths.hpp).
  std::shared_ptr<const std::vector<HeaderCode>> parsed;
};

struct FileSymbols {
  std::map<std::string, MacroValue> integer_macros;
  std::map<std::string, FunctionMacro> function_macros;
  std::map<std::string, grammar::ConstantVariable> constant_variables;
  // Macros with no one whole-number value: why ("'BLOCK_SIZE' is defined
  // under a condition gi cannot decide (line 7): which holds depends on the
  // build").
  std::map<std::string, std::string> macro_refusals;
  // The local headers (IncludedHeaders::files), for the structs a kernel's
  // parameters name; null where none were read.
  std::shared_ptr<const std::vector<grammar::SourceFile>> header_files;
  // The parsed local headers (IncludedHeaders::parsed); null where none.
  std::shared_ptr<const std::vector<HeaderCode>> header_code;
};

// `until_line`: the file's directives from this line on are left out (a
// kernel's macros are those defined before it); 0 reads them all.
FileSymbols file_symbols(const grammar::ParsedKernel& k, const IncludedHeaders& headers = {}, int until_line = 0);

}  // namespace gi::analysis
