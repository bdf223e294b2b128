#pragma once
// A seed's variants on the CPU emulator (fitness/emulation/cpu_emulator.hpp): what
// `gi emulate` and the seed-path tests run. A variant is built exactly as gi
// builds it for the GPU (gi/evaluate/variant_build.hpp: patch applied, switches
// resolved), prepared workloads get the variant's launch geometry, and the
// check is the GPU runner's. For branch coverage the patched source is
// instrumented unresolved (fitness/instrument/branch_coverage.hpp), as `gi coverage`
// does, so branch keys are kernel.cu's lines and columns.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fitness/instrument/branch_coverage.hpp"
#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_effect.hpp"

namespace gi {

struct EmulatedVariant {
  fitness::EmulatedKernel kernel;
  grammar::LaunchEffect launch;
  // Set by build_emulated_variant(..., coverage = true): the instrumented
  // kernel and its sites; `kernel` is then the instrumented one.
  std::optional<fitness::BranchInstrumentation> instrumentation;
  std::string error;  // the patch does not apply, or the kernel does not build
  bool ok() const { return error.empty() && kernel.ok(); }
};

// Never throws for a patch that does not apply or a kernel that does not
// build: `error` says why.
EmulatedVariant build_emulated_variant(const fitness::CpuEmulator& emulator, const Seed& seed,
                                       const fitness::KernelSpec& spec, const grammar::Patch& patch,
                                       bool coverage = false);

// The seed as its own reference on the emulator, for a spec that says
// "reference": "seed" (gi/evaluate/seed_reference.hpp does it on a GPU);
// does nothing for another spec. The reference is the unpatched seed at its
// default switches and the spec's default block size, built and run as any
// variant here; its outputs become expected values as the GPU's do
// (gi/evaluate/seed_runs.hpp), from one run: the emulator is deterministic
// (blocks, lanes and float atomics in one fixed order), so further runs
// would repeat it bit for bit and the run-to-run spread is zero.
void use_emulated_seed_as_reference(const fitness::CpuEmulator& emulator, const Seed& seed,
                                    const fitness::KernelSpec& spec);

// The spec's small training workloads: "train:1" .. "train:N" (every
// training workload but the large timed one); {"train"} for a spec without
// train_checks.
std::vector<std::string> emulated_training_workloads(const fitness::KernelSpec& spec);

// Runs `variant` checked on a prepared workload, with the variant's launch
// geometry for `block_size` set on the plan first. Counted (branch counters
// read) when the variant is instrumented.
fitness::CountedRun emulate_workload(const fitness::CpuEmulator& emulator, const EmulatedVariant& variant,
                                     const fitness::KernelSpec& spec, fitness::PreparedWorkload& workload,
                                     unsigned block_size);

}  // namespace gi
