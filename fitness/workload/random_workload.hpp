#pragma once
// The generator a user's kernel gets when it has none of its own
// (generator "random" in spec.json, what `gi init` writes): sizes and scalar
// values are the workload's numeric variables, and every input buffer is
// drawn from the distribution the workload names for it:
//
//   "variables": {"n": 100000,
//                 "inputs": {"a":   {"uniform": [-1, 1]},
//                            "idx": {"uniform": [0, "n - 1"]},   // ints: whole numbers, both ends included
//                            "w":   {"normal": [0, 0.5]},
//                            "k":   {"constant": 3}}}
//
// A buffer of several fields laid out one after another (CFD's density, then
// three momenta, then energy, each nelr long) is drawn in pieces, each but
// the last with its length in elements, the last the rest of the buffer:
//
//   "variables": {"inputs": {"variables": {"pieces": [
//       {"length": "nelr", "uniform": [1, 2]},
//       {"length": "3 * nelr", "uniform": [-0.1, 0.1]},
//       {"uniform": [5, 6]}]}}}
//
// A user's own data is "values": the numbers in order, from the piece's
// start, over again when they run out. Pieces given "every": L fill L
// elements and repeat, a record per work item (Rodinia's myocyte: 91 initial
// values at the start of each workload's (xmax + 1) * 91, the rest zero):
//
//   "y": {"pieces": [{"length": 91, "values": [1.37e-3, 0.987, ...]},
//                    {"constant": 0}],
//         "every": "(xmax + 1) * 91"}
//
// Bounds and lengths may be expressions over the numeric variables. The draws depend
// only on the seed, the parameter's name and its element index, so a
// workload is the same on every machine.
#include <cstdint>
#include <string>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/reference_registry.hpp"

namespace gi::fitness {

inline constexpr const char* kRandomGenerator = "random";

// Throws std::runtime_error naming the spec, the workload's JSON path and
// the parameter or distribution at fault.
Workload random_workload(const KernelSpec& spec, const WorkloadSpec& workload, std::uint64_t seed);

}  // namespace gi::fitness
