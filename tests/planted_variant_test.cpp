// A planted exploit of the training data (tests/data/planted_border_read.gi):
// the trilinear seed with its border check dropped reads every corner from
// the image, also outside it. The registration-like timed workload never
// leaves the image, so the timed workload alone cannot catch it; the seed's
// training check train:1 drives every face, and the reads it causes past
// the ends of the image land in the NaN guards around the buffer.
//
// CPU: the patch compiles, and the data really behave as claimed. GPU
// (SKIPPED without a CUDA device): the GpuEvaluator passes the variant with
// the old training set (train_checks removed) and fails it, naming train:1,
// with the spec's training set.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/gpu/device_buffers.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/gpu_evaluator.hpp"
#include "gi/seed/seed.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "grammar/patch.hpp"
#include "test_support.hpp"
#include "training_checks.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;
using nlohmann::json;

// The data seeds of the GPU test; the CPU tests check the same ones.
constexpr std::uint64_t kDataSeeds[] = {11, 12};

const fs::path& seed_dir() {
  static const fs::path dir = gi::test::source_dir() / "seeds/resampling/trilinear";
  return dir;
}

gi::grammar::Patch planted_patch() {
  return gi::grammar::parse_patch(gi::read_text_file(gi::test::source_dir() / "tests/data/planted_border_read.gi"),
                                  "planted_border_read.gi");
}

// The spec as it was before training checks: the timed workload alone.
KernelSpec spec_without_checks() {
  json j = json::parse(std::ifstream(seed_dir() / "spec.json"));
  j["workloads"].erase("train_checks");
  return parse_kernel_spec(j, (seed_dir() / "spec.json").string() + " (without train_checks)",
                           gi::read_text_file(seed_dir() / "kernel.cu"), "kernel.cu");
}

// Where the corner reads of the trilinear kernel go for every active voxel:
// how many corners lie beyond each face of the floating image, and the
// lowest and highest linear index a kernel without the border check reads.
struct CornerReads {
  std::size_t beyond[6] = {};  // x < 0, x >= dimX, y < 0, y >= dimY, z < 0, z >= dimZ
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  std::int64_t highest = std::numeric_limits<std::int64_t>::min();
  std::size_t outside() const {
    std::size_t n = 0;
    for (std::size_t b : beyond) n += b;
    return n;
  }
};

CornerReads corner_reads(const Workload& w) {
  const auto dim = [&](const char* name) { return static_cast<std::int64_t>(w.variables.at(name)); };
  const std::int64_t fx = dim("floatingDimX"), fy = dim("floatingDimY"), fz = dim("floatingDimZ");
  const auto& bytes = w.inputs.at("deformationField");
  std::vector<float> field(bytes.size() / 4);
  std::memcpy(field.data(), bytes.data(), bytes.size());
  CornerReads r;
  for (std::size_t t = 0; t + 3 < field.size(); t += 4) {
    // As the kernel computes them: floorf of the float position.
    const std::int64_t pre[3] = {static_cast<std::int64_t>(std::floor(field[t])),
                                 static_cast<std::int64_t>(std::floor(field[t + 1])),
                                 static_cast<std::int64_t>(std::floor(field[t + 2]))};
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const std::int64_t X = pre[0] + a, Y = pre[1] + b, Z = pre[2] + c;
          r.beyond[0] += X < 0;
          r.beyond[1] += X >= fx;
          r.beyond[2] += Y < 0;
          r.beyond[3] += Y >= fy;
          r.beyond[4] += Z < 0;
          r.beyond[5] += Z >= fz;
          const std::int64_t index = (Z * fy + Y) * fx + X;
          r.lowest = std::min(r.lowest, index);
          r.highest = std::max(r.highest, index);
        }
  }
  return r;
}

TEST(PlantedVariant, PatchDropsTheBorderCheckAndCompiles) {
  const gi::Seed seed = gi::load_seed(seed_dir());
  const CompileRequest request =
      gi::variant_request(gi::variant_source(seed, planted_patch()), seed, gi::Tuning{}, "sm_90");
  EXPECT_EQ(request.source.find("X < floatingDimX"), std::string::npos);
  EXPECT_NE(request.source.find("                    if (tid < activeVoxelNumber) {"), std::string::npos);
  const CompileResult compiled = Compiler(std::nullopt).compile(request);
  ASSERT_TRUE(compiled.ok) << compiled.error << "\n" << compiled.log;
  EXPECT_FALSE(compiled.cubin.empty());
}

// Why the old training set passed the variant: no corner of any active voxel
// of the timed workload lies outside the image, so dropping the check
// changes nothing there.
// (One data seed: a 217^3 workload takes seconds to make.)
TEST(PlantedVariant, TheTimedWorkloadNeverLeavesTheImage) {
  const KernelSpec spec = load_kernel_spec(seed_dir());
  const Workload w = generate_workload(spec, spec.train, kDataSeeds[0]);
  const CornerReads r = corner_reads(w);
  EXPECT_EQ(r.outside(), 0u);
  EXPECT_GT(w.variables.at("activeVoxelNumber"), 1e6);  // the registration-sized brain mask
}

// The training check drives every face for every data seed (it changes each
// generation), and the reads of a kernel without the check run past both
// ends of the image, never further than the NaN guards reach.
TEST(PlantedVariant, TheTrainingCheckDrivesEveryFaceAndReadsIntoTheGuards) {
  const KernelSpec spec = load_kernel_spec(seed_dir());
  // The check the planted variant fails on: the first, so the search names it.
  const WorkloadSpec& check = spec.workload("train:1");
  ASSERT_EQ(&check, &gi::test::training_check(spec, {{"zoom", 1.3}}));
  std::vector<std::uint64_t> seeds(std::begin(kDataSeeds), std::end(kDataSeeds));
  for (std::uint64_t s = 100; s < 130; ++s) seeds.push_back(s);
  for (const std::uint64_t seed : seeds) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Workload w = generate_workload(spec, check, seed);
    const CornerReads r = corner_reads(w);
    for (int face = 0; face < 6; ++face) EXPECT_GT(r.beyond[face], 0u) << "face " << face;
    const auto voxels = static_cast<std::int64_t>(w.variables.at("floatingVoxelNumber"));
    const auto guard_floats = static_cast<std::int64_t>(kGuardBytes / 4);
    EXPECT_LT(r.lowest, 0);
    EXPECT_GE(r.highest, voxels);
    EXPECT_GE(r.lowest, -guard_floats);
    EXPECT_LT(r.highest, voxels + guard_floats);
    // The padding value matters: it is not 0, which a dropped padding term would give.
    EXPECT_NE(w.variables.at("paddingValue"), 0.0);
  }
}

TEST(PlantedVariantGpu, PassesTheTimedWorkloadAloneButFailsTheTrainingSet) {
  const auto cuda = probe_cuda();
  if (!cuda.driver_ok || cuda.gpus.empty()) GTEST_SKIP() << "no CUDA device: " << cuda.message;
  const gi::Seed seed = gi::load_seed(seed_dir());
  const KernelSpec old_spec = spec_without_checks();
  const KernelSpec new_spec = load_kernel_spec(seed_dir());
  const fs::path cache = fs::temp_directory_path() / ("gi-planted-test-" + std::to_string(::getpid()));
  gi::GpuEvaluatorConfig config;
  config.worker_executable = gi::test::gi_binary();
  config.cache_dir = cache;
  config.jobs = 4;
  config.timing.budget_seconds = 0.3;
  const std::vector<gi::grammar::Patch> batch = {gi::grammar::Patch{}, planted_patch()};
  {
    gi::GpuEvaluator evaluator(seed, old_spec, config);
    int generation = 0;
    for (const std::uint64_t data_seed : kDataSeeds) {
      evaluator.begin_generation(generation++, data_seed);
      ASSERT_EQ(evaluator.workload_names(), (std::vector<std::string>{"train"}));
      const auto results = evaluator.evaluate(batch);
      ASSERT_TRUE(results[0].valid()) << results[0].message;
      EXPECT_TRUE(results[1].valid()) << "the old training set caught it after all: " << results[1].message;
    }
  }
  {
    gi::GpuEvaluator evaluator(seed, new_spec, config);
    int generation = 0;
    for (const std::uint64_t data_seed : kDataSeeds) {
      evaluator.begin_generation(generation++, data_seed);
      const auto results = evaluator.evaluate(batch);
      ASSERT_TRUE(results[0].valid()) << "the seed fails its own training set: " << results[0].message;
      const gi::Evaluation& planted = results[1];
      std::cout << "[ planted  ] data seed " << data_seed << ": " << gi::to_string(planted.status) << ": "
                << planted.message << "\n";
      EXPECT_FALSE(planted.valid());
      EXPECT_EQ(planted.failed_workload, "train:1");
      EXPECT_NE(planted.message.find(new_spec.train_checks[0].purpose), std::string::npos) << planted.message;
    }
  }
  fs::remove_all(cache);
}

}  // namespace
