#include "gi/library/seed_emulation.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "gi/evaluate/seed_runs.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/seed/seed_build.hpp"
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
      // The device source, as every compile: host code set aside (a user's
      // file may hold host functions of types the emulator's g++ lacks).
      v.instrumentation = fitness::instrument_branches(
          grammar::patch_kernel(seed.grammar, patch, seed.context).device_source, file, spec.entry);
      source = v.instrumentation->source;
    }
  } catch (const std::exception& e) {
    v.error = std::string(coverage ? "cannot instrument the variant: " : "the patch does not apply: ") + e.what();
    return v;
  }
  // The project's headers as NVRTC gets them; a system header's stand-in
  // (kSetAsideHeader) is NVRTC's, and g++ has the real one.
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& h : seed.build.headers)
    if (h.second.rfind(kSetAsideHeader, 0) != 0) headers.push_back(h);
  v.kernel = emulator.load(source, spec.entry, file, headers, seed.build.pre_includes);
  if (!v.kernel.ok()) v.error = v.kernel.error;
  return v;
}

namespace {

// The seed on the emulator, built once for every workload of the process.
class EmulatedSeed {
 public:
  EmulatedSeed(const fitness::CpuEmulator& emulator, const Seed& seed, const fitness::KernelSpec& spec)
      : emulator_(emulator), seed_(seed), spec_(spec) {}

  fitness::MeasuredReference run(const fitness::Workload& workload) {
    std::lock_guard lock(mutex_);
    if (!variant_) {
      variant_ = build_emulated_variant(emulator_, seed_, spec_, grammar::Patch{});
      if (!variant_->ok())
        throw std::runtime_error("the seed, to be its own reference, does not build for the CPU emulator: " +
                                 variant_->error);
    }
    const unsigned block = spec_.default_block_size;
    fitness::LaunchPlan plan = fitness::build_launch_plan(spec_, workload, block);
    fitness::set_launch_geometry(plan, spec_, workload.variables, block, variant_->launch);
    // One run: deterministic, so the spread of more would be zero.
    return measure_seed_runs(plan, 1, [&] {
      SeedRun r;
      r.report = emulator_.run_for_outputs(variant_->kernel, plan, r.outputs);
      return r;
    });
  }

 private:
  const fitness::CpuEmulator emulator_;
  const Seed seed_;
  const fitness::KernelSpec spec_;
  std::mutex mutex_;
  std::optional<EmulatedVariant> variant_;
};

}  // namespace

void use_emulated_seed_as_reference(const fitness::CpuEmulator& emulator, const Seed& seed,
                                    const fitness::KernelSpec& spec) {
  if (!spec.reference_is_seed) return;
  auto emulated = std::make_shared<EmulatedSeed>(emulator, seed, spec);
  // Its own cache key: the emulator's outputs are not the GPU's.
  fitness::set_seed_reference(
      spec.entry, {seed.sha256 + "/b" + std::to_string(spec.default_block_size) + "/emulator",
                   [emulated](const fitness::Workload& w) { return emulated->run(w); }});
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
