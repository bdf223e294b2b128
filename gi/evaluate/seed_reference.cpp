#include "gi/evaluate/seed_reference.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>

#include <cuda_runtime.h>

#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/seed_runs.hpp"
#include "gi/evaluate/variant_build.hpp"

namespace gi {

namespace {

constexpr int kRuns = 3;

// One GPU, one compiled seed, shared by every workload of the process (the
// evaluator prepares workloads on a thread of its own: each call makes the
// device current on its thread).
class SeedOnGpu {
 public:
  SeedOnGpu(const Seed& seed, const fitness::KernelSpec& spec, int device,
            std::optional<std::filesystem::path> cache)
      : seed_(seed), spec_(spec), device_(device), cache_(std::move(cache)) {}

  fitness::MeasuredReference run(const fitness::Workload& workload) {
    std::lock_guard lock(mutex_);
    cudaSetDevice(device_);
    load();
    const fitness::LaunchPlan plan = fitness::build_launch_plan(spec_, workload, spec_.default_block_size);
    return measure_seed_runs(plan, kRuns, [&] {
      SeedRun r;
      r.report = runner_->run_checked(*kernel_, plan, {}, fitness::Tolerance{});
      if (!r.report.ok()) return r;
      for (const fitness::BufferArg& b : plan.buffers)
        if (b.role == fitness::ParamRole::Out || b.role == fitness::ParamRole::InOut)
          r.outputs.push_back(runner_->buffer_bytes(plan, b.name));
      return r;
    });
  }

 private:
  void load() {
    if (kernel_) return;
    runner_ = std::make_unique<fitness::GpuRunner>(device_);
    const BuiltVariant built = compile_variant(seed_, grammar::Patch{}, Tuning{spec_.default_block_size, {}},
                                               runner_->arch(), cache_);
    if (!built.binary.ok)
      throw std::runtime_error("the seed, to be its own reference, does not compile: " + built.binary.error);
    fitness::LoadResult loaded = runner_->load(built.binary.cubin, spec_.entry);
    if (!loaded.ok()) throw std::runtime_error("the seed, to be its own reference, does not load: " + loaded.message);
    kernel_ = std::move(loaded.kernel);
  }

  const Seed seed_;
  const fitness::KernelSpec spec_;
  const int device_;
  const std::optional<std::filesystem::path> cache_;
  std::mutex mutex_;
  std::unique_ptr<fitness::GpuRunner> runner_;
  std::optional<fitness::LoadedKernel> kernel_;
};

}  // namespace

void use_seed_as_reference(const Seed& seed, const fitness::KernelSpec& spec, int device,
                           const std::optional<std::filesystem::path>& cache_dir) {
  if (!spec.reference_is_seed) return;
  auto gpu = std::make_shared<SeedOnGpu>(seed, spec, device, cache_dir);
  fitness::set_seed_reference(
      spec.entry, {seed.sha256 + "/b" + std::to_string(spec.default_block_size) + "/" + std::to_string(kRuns) + "runs",
                   [gpu](const fitness::Workload& w) { return gpu->run(w); }});
}

}  // namespace gi
