#pragma once
// The seed's runs on one workload turned into the expected outputs of the
// seed as its own reference, whatever ran it: the GPU
// (gi/evaluate/seed_reference.hpp) or the CPU emulator
// (gi/library/seed_emulation.hpp). One place decides what a reference is:
// the first run's values, component by component in double, and the largest
// difference of a later run as the spread that widens the tolerance.
#include <cstddef>
#include <functional>
#include <vector>

#include "fitness/workload/launch_plan.hpp"
#include "fitness/workload/reference_registry.hpp"

namespace gi {

// One checked run of the seed with no expected outputs (so guards and
// inputs are checked) and the bytes of every Out/InOut buffer of the plan
// after it, in plan order.
struct SeedRun {
  fitness::CheckReport report;
  std::vector<std::vector<std::byte>> outputs;
};

// Calls `run` `runs` times. Throws std::runtime_error when a run fails (a
// seed that faults, times out or writes out of bounds is no reference),
// when runs differ in an integer output, when one run's float is not
// finite where another's differs, or when a float output holds no finite
// value at all.
fitness::MeasuredReference measure_seed_runs(const fitness::LaunchPlan& plan, int runs,
                                             const std::function<SeedRun()>& run);

}  // namespace gi
