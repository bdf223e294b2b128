#pragma once
// From a kernel spec and a generated workload to what the GPU runner needs:
// the launch plan (buffers with their input bytes, scalars, geometry) and the
// expected outputs (reference values, written elements, checked components).
// Every error names the spec file and the JSON path of the field at fault.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/launch_plan.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "grammar/patch_effect.hpp"

namespace gi::fitness {

// Runs the spec's generator for one workload; `seed` is the generator seed
// as given (see prepare_workload for how it is chosen).
Workload generate_workload(const KernelSpec& spec, const WorkloadSpec& workload, std::uint64_t seed);

// Copies the input bytes into the plan; the rvalue form moves them.
LaunchPlan build_launch_plan(const KernelSpec& spec, const Workload& workload, unsigned block_size);
LaunchPlan build_launch_plan(const KernelSpec& spec, Workload&& workload, unsigned block_size);

// Recomputes block and grid (and dynamic shared memory) for another block
// size and a variant's launch effect; `variables` are the workload's derived
// variables. Numeric switch values are variables of the launch expressions
// (items per thread shrink the grid); coarsening divides grid.x, rounding up.
void set_launch_geometry(LaunchPlan& plan, const KernelSpec& spec, const std::map<std::string, double>& variables,
                         unsigned block_size, const grammar::LaunchEffect& effect = {});

// The plan of a launch on memory the caller owns (gi register's arrays):
// parameter order, scalar bytes, buffer counts and geometry, all from
// `variables`; no input bytes.
LaunchPlan launch_plan_shape(const KernelSpec& spec, const std::map<std::string, double>& variables,
                             unsigned block_size, const grammar::LaunchEffect& effect = {});

// Values for unwritten elements are NaN in `reference` and in the result.
std::vector<ExpectedOutput> expected_outputs(const KernelSpec& spec, const Workload& workload,
                                             const ReferenceOutputs& reference);

double min_bytes(const KernelSpec& spec, const Workload& workload);

// Values the checker compares: written elements times checked components.
std::size_t checked_values(const ExpectedOutput& expected, std::size_t components);
std::size_t checked_values(const LaunchPlan& plan, const std::vector<ExpectedOutput>& expected);
// Values the kernel reads: elements times components of every input and in-out buffer.
std::size_t input_values(const LaunchPlan& plan);

struct PreparedWorkload {
  std::string which;          // "train", "validate:2"
  std::string generator;
  std::uint64_t seed = 0;     // the generator seed actually used
  std::map<std::string, double> variables;
  LaunchPlan plan;
  std::vector<ExpectedOutput> expected;
  Tolerance tolerance;
  bool reference_cache_hit = false;
  // The seed as its own reference: the largest difference between its runs
  // (added twice to tolerance.abs).
  double reference_spread_abs = 0;
  std::size_t checked_values = 0;
};

// which: "train" (generator seed = `seed`: a fresh one per generation),
// "train:N" (a training check workload: `seed` plus a per-N offset) or
// "validate:N" (generator seed = the spec's seed for that workload + `seed`,
// so 0 gives the canonical held-out data). With a cache dir the reference is
// looked up there first and stored after computing. block_size 0 means the
// spec's default.
PreparedWorkload prepare_workload(const KernelSpec& spec, const std::string& which, std::uint64_t seed,
                                  const std::optional<std::filesystem::path>& cache_dir = std::nullopt,
                                  unsigned block_size = 0);

}  // namespace gi::fitness
