#include "gi/evaluate/seed_reference.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <cuda_runtime.h>

#include "fitness/check/output_check.hpp"
#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
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
    std::vector<std::vector<std::byte>> first;
    fitness::MeasuredReference m;
    for (int run = 0; run < kRuns; ++run) {
      const fitness::CheckReport r = runner_->run_checked(*kernel_, plan, {}, fitness::Tolerance{});
      if (!r.ok())
        throw std::runtime_error("the seed, run as its own reference (run " + std::to_string(run + 1) + " of " +
                                 std::to_string(kRuns) + "): " + fitness::to_string(r.status) + ": " + r.message);
      std::size_t k = 0;
      for (const fitness::BufferArg& b : plan.buffers) {
        if (b.role != fitness::ParamRole::Out && b.role != fitness::ParamRole::InOut) continue;
        std::vector<std::byte> bytes = runner_->buffer_bytes(plan, b.name);
        if (run == 0) {
          m.outputs[b.name] = values_of(b, bytes);
          first.push_back(std::move(bytes));
        } else {
          m.spread_abs = std::max(m.spread_abs, difference(b, first[k], bytes));
        }
        ++k;
      }
    }
    return m;
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

  static std::vector<double> values_of(const fitness::BufferArg& b, const std::vector<std::byte>& bytes) {
    const std::size_t eb = fitness::element_bytes(b.type), components = fitness::element_components(b.type);
    std::vector<double> v;
    v.reserve(b.count * components);
    for (std::size_t e = 0; e < b.count; ++e)
      for (std::size_t c = 0; c < components; ++c) v.push_back(fitness::component_value(b.type, bytes.data() + e * eb, c));
    return v;
  }

  // Largest |difference| between two runs' values of one buffer: integer
  // outputs must repeat exactly, float ones stay finite.
  static double difference(const fitness::BufferArg& b, const std::vector<std::byte>& x,
                           const std::vector<std::byte>& y) {
    const double d = fitness::max_difference(b, x, y);
    if (std::isfinite(d)) return d;
    throw std::runtime_error(
        "the seed, run as its own reference, wrote " +
        std::string(fitness::element_is_float(b.type) ? "a non-finite value in one run and another value in the other"
                                                      : "different integers") +
        " to '" + b.name + "' in two runs on the same data: a reference must repeat");
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
