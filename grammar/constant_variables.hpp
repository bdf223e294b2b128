#pragma once
// The file's `__constant__` variables: `[__device__] __constant__ [const]
// TYPE NAME [= ...| [N]];`. A host sets them with cudaMemcpyToSymbol before
// a launch; a spec sets them (fitness/workload/kernel_spec.hpp, "constants":
// a scalar's value, an array's elements from a distribution), gi init infers
// sizes from the scalar ones (analysis/parameter_use.hpp).
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::grammar {

struct ConstantVariable {
  std::string name;
  std::string type;   // the declared type without qualifiers: "int", "float3", "unsigned int"
  int line = 0;
  bool array = false; // `NAME[N]`: the spec sets its N elements from a distribution (kernel_spec.hpp)
  // An array's length as written between its brackets ("KERNEL_LENGTH",
  // "2 * R + 1"); more than one dimension: their product's factors joined by " * ".
  std::string length;
};

std::vector<ConstantVariable> constant_variables(const ParsedKernel& k);

}  // namespace gi::grammar
