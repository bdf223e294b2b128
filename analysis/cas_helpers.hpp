#pragma once
// Atomic operations a kernel makes itself from compare-and-swap: the usual
// float maximum (or minimum) in a `__device__` helper,
//
//     __device__ void atomic_max_float(float* address, float value) {
//         int* bits = (int*)address;
//         int old = *bits, assumed;
//         do {
//             assumed = old;
//             old = atomicCAS(bits, assumed, __float_as_int(fmaxf(value, __int_as_float(assumed))));
//         } while (assumed != old);
//     }
//
// Such a helper is an atomic maximum on floats, as commutative as
// atomicMax, so `aggregate` can combine its calls the same way and call the
// helper itself once per warp or block. Recognised: a __device__ function of
// two parameters (a pointer to float or double, and a value) whose body
// holds one atomicCAS, in a loop, on the pointer (or a local made from it)
// whose new value is fmaxf/fmaxf/fmax/max (or the min forms) of the value
// parameter and the word it read, and which writes no other memory.
#include <map>
#include <string>

#include "analysis/aggregate_sites.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct CasHelper {
  AtomicOperation operation;  // function: the helper's name; kind: "max" or "min"
  std::string type;           // "float" or "double"
};

// Every such helper of the file, by name.
std::map<std::string, CasHelper> find_cas_helpers(const grammar::ParsedKernel& k);

}  // namespace gi::analysis
