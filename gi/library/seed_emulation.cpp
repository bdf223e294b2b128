#include "gi/library/seed_emulation.hpp"

#include "gi/evaluate/variant_build.hpp"
#include "grammar/patch_apply.hpp"

namespace gi {

EmulatedVariant build_emulated_variant(const fitness::CpuEmulator& emulator, const Seed& seed,
                                       const fitness::KernelSpec& spec, const grammar::Patch& patch, bool coverage) {
  EmulatedVariant v;
  const std::string file = seed.grammar.file_name();
  std::string source;
  try {
    VariantSource variant = variant_source(seed, patch);
    v.launch = std::move(variant.launch);
    source = std::move(variant.compile_source);
    if (coverage) {
      // Unresolved: the preprocessor drops the dead paths, whose counters stay 0.
      v.instrumentation = fitness::instrument_branches(grammar::apply_patch(seed.grammar, patch, seed.context), file);
      source = v.instrumentation->source;
    }
  } catch (const std::exception& e) {
    v.error = std::string(coverage ? "cannot instrument the variant: " : "the patch does not apply: ") + e.what();
    return v;
  }
  v.kernel = emulator.load(source, spec.entry, file);
  if (!v.kernel.ok()) v.error = v.kernel.error;
  return v;
}

std::vector<std::string> emulated_training_workloads(const fitness::KernelSpec& spec) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i <= spec.train_checks.size(); ++i) out.push_back("train:" + std::to_string(i));
  if (out.empty()) out.push_back("train");
  return out;
}

fitness::CountedRun emulate_workload(const fitness::CpuEmulator& emulator, const EmulatedVariant& variant,
                                     const fitness::KernelSpec& spec, fitness::PreparedWorkload& workload,
                                     unsigned block_size) {
  if (!variant.ok()) {
    fitness::CountedRun failed;
    failed.check.status = fitness::RunStatus::LoadError;
    failed.check.message = variant.error;
    return failed;
  }
  fitness::set_launch_geometry(workload.plan, spec, workload.variables, block_size, variant.launch);
  if (variant.instrumentation)
    return emulator.run_counted(variant.kernel, workload.plan, workload.expected, workload.tolerance,
                                fitness::kBranchCounterSymbol, variant.instrumentation->counters());
  fitness::CountedRun run;
  run.check = emulator.run_checked(variant.kernel, workload.plan, workload.expected, workload.tolerance);
  return run;
}

}  // namespace gi
