#pragma once
// The file's `__constant__` variables: `[__device__] __constant__ [const]
// TYPE NAME [= ...| [N]];`. A host sets them with cudaMemcpyToSymbol before
// a launch; a spec sets the scalar ones (fitness/workload/kernel_spec.hpp,
// "constants"), gi init infers sizes from them (analysis/parameter_use.hpp).
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::grammar {

struct ConstantVariable {
  std::string name;
  std::string type;   // the declared type without qualifiers: "int", "float3", "unsigned int"
  int line = 0;
  bool array = false; // `NAME[N]`: no scalar a spec can set
};

std::vector<ConstantVariable> constant_variables(const ParsedKernel& k);

}  // namespace gi::grammar
