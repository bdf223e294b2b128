// The GPU evaluator's batch rules, on a real GPU: identical variants are
// measured once ("cached"), and variants whose sources differ but whose
// binaries are the same share one measurement ("same_binary"). Skipped
// without a CUDA device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/evaluate/gpu_evaluator.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/patch.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

using gi::test::gi_binary;

// A resumed run adds each call's counts to the earlier ones (evolution_run).
TEST(EvaluatorStats, RoundTripsThroughJsonAndAddsAcrossCalls) {
  gi::EvaluatorStats a;
  a.compile_seconds = 1.5;
  a.compile_wait_seconds = 0.5;
  a.gpu_seconds = 2;
  a.total_seconds = 3;
  a.prepare_seconds = 0.25;
  a.time_ms = 1200;
  a.check_ms = 300;
  a.evaluations = 600;
  a.measured = 200;
  a.compiled = 590;
  a.ptx_reuses = 400;
  a.binary_reuses = 350;
  const gi::EvaluatorStats back = gi::EvaluatorStats::from_json(a.to_json());
  EXPECT_EQ(back.to_json(), a.to_json());
  gi::EvaluatorStats sum = back;
  sum += a;
  const auto j = sum.to_json();
  EXPECT_EQ(j["evaluations"], 1200);
  EXPECT_EQ(j["binary_reuses"], 700);
  EXPECT_DOUBLE_EQ(j["total_seconds"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(j["worker_phases_seconds"]["timing"].get<double>(), 2.4);
  EXPECT_DOUBLE_EQ(j["evaluations_per_second"].get<double>(), 200.0);
}

// An evaluator on the B-spline seed, on a real GPU (skipped without one).
class GpuEvaluatorGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto cuda = gi::fitness::probe_cuda();
    if (!cuda.driver_ok || cuda.gpus.empty()) GTEST_SKIP() << "no CUDA device: " << cuda.message;
    config.worker_executable = gi_binary();
    config.cache_dir = cache;
    config.jobs = 4;
    config.timing.budget_seconds = 0.3;
  }
  void TearDown() override { fs::remove_all(cache); }

  const fs::path dir = gi::test::source_dir() / "seeds/bspline/deformation_field";
  const gi::Seed seed = gi::load_seed(dir);
  const gi::fitness::KernelSpec spec = gi::fitness::load_kernel_spec(dir);
  const fs::path cache = fs::temp_directory_path() / ("gi-evaluator-test-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  gi::GpuEvaluatorConfig config;
};

TEST_F(GpuEvaluatorGpu, SameBinaryIsMeasuredOnceAndIdenticalVariantsAreCached) {
  gi::GpuEvaluator evaluator(seed, spec, config);
  evaluator.begin_generation(0, 7);
  // A second copy of the plain path's "position.w = 0.0f;" changes the
  // source, not the code.
  const std::string store = "<_kernel.cu_" + std::to_string(gi::test::last_rule_line_holding(seed, "position.w = 0.0f;")) + ">";
  const std::string duplicate_store = store + "+" + store;
  const auto results = evaluator.evaluate({gi::grammar::Patch{}, gi::grammar::parse_patch(duplicate_store),
                                           gi::grammar::parse_patch(duplicate_store)});
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].valid()) << results[0].message;
  EXPECT_FALSE(results[0].same_binary);
  EXPECT_TRUE(results[1].valid()) << results[1].message;
  EXPECT_TRUE(results[1].same_binary);
  EXPECT_FALSE(results[1].cached);
  EXPECT_EQ(results[1].median_ms, results[0].median_ms);
  EXPECT_TRUE(results[2].cached);
  EXPECT_EQ(evaluator.stats().measured, 1);
  EXPECT_EQ(evaluator.stats().binary_reuses, 1);
  EXPECT_EQ(evaluator.stats().evaluations, 3);
}

// Switch paths and coarsened variants are checked like any other variant:
// on the GPU they must give the reference's answer, and a variant whose launch
// does not fit its code (the grid halved for the plain path's loop, but the
// warp-cooperative path chosen, which does not loop) fails the check.
TEST_F(GpuEvaluatorGpu, SwitchPathsAndCoarsenedVariantsAreChecked) {
  gi::GpuEvaluator evaluator(seed, spec, config);
  evaluator.begin_generation(0, 11);
  // An edit in the dead (warp) path leaves the published source as the seed's.
  const std::string dead = "<_kernel.cu_" + std::to_string(gi::test::last_rule_line_holding(seed, "lane = threadIdx.x & 31;")) + ">";
  const std::vector<std::string> texts = {"", "define:BSPLINE_PATH=1", "coarsen:2", "coarsen:4,strided",
                                          "define:BSPLINE_PATH=1 coarsen:2", dead};
  std::vector<gi::grammar::Patch> patches;
  for (const auto& t : texts) patches.push_back(gi::grammar::parse_patch(t));
  const auto r = evaluator.evaluate(patches);
  ASSERT_EQ(r.size(), texts.size());
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(r[i].valid()) << texts[i] << ": " << gi::to_string(r[i].status) << " " << r[i].message;
  // Coarsening wraps the default path's body; a patch that switches that path
  // off leaves the wrapped region dead, so it is rejected before compiling.
  EXPECT_FALSE(r[4].valid()) << "a coarsen edit of a path the patch switches off must be rejected";
  EXPECT_EQ(r[4].status, gi::EvalStatus::Rejected) << r[4].message;
  EXPECT_TRUE(r[5].cached) << "an edit in a dead path gives the seed's published source";
}

// Two GPUs of one host (skipped with fewer): the batch's distinct binaries
// are spread over both workers, each variant's own GPU is named, and its
// median is expressed on the first GPU through the seed time of its own.
TEST_F(GpuEvaluatorGpu, TwoDevicesShareABatchAndEachVariantNamesItsGpu) {
  if (gi::fitness::probe_cuda().gpus.size() < 2) GTEST_SKIP() << "needs two CUDA devices";
  config.devices = {0, 1};
  gi::GpuEvaluator evaluator(seed, spec, config);
  evaluator.begin_generation(0, 5);
  const std::vector<std::string> texts = {"", "define:BSPLINE_PATH=1", "coarsen:2", "coarsen:4,strided",
                                          "coarsen:2,strided", "coarsen:4"};
  std::vector<gi::grammar::Patch> patches;
  for (const auto& t : texts) patches.push_back(gi::grammar::parse_patch(t));
  const auto r = evaluator.evaluate(patches);
  ASSERT_EQ(r.size(), texts.size());
  std::set<int> used;
  for (std::size_t i = 0; i < r.size(); ++i) {
    ASSERT_TRUE(r[i].valid()) << texts[i] << ": " << gi::to_string(r[i].status) << " " << r[i].message;
    ASSERT_TRUE(r[i].device == 0 || r[i].device == 1) << texts[i] << " ran on device " << r[i].device;
    used.insert(r[i].device);
    EXPECT_TRUE(std::isfinite(r[i].device_median_ms)) << texts[i];
    // On the first GPU the scale is 1; on the second it is a ratio of two
    // seed times of the same kernel, which stays near 1 on twin GPUs.
    if (r[i].device == 0) EXPECT_DOUBLE_EQ(r[i].median_ms, r[i].device_median_ms) << texts[i];
    else EXPECT_NEAR(r[i].median_ms / r[i].device_median_ms, 1.0, 0.5) << texts[i];
  }
  EXPECT_EQ(used.size(), 2u) << "six distinct binaries, two free workers: both GPUs must measure";
}

// A tuning candidate the seed cannot launch with (1024 threads a block need
// more registers than the B-spline seed's block has on sm_90) is a failed
// candidate, not a failed run: with nothing to compare the two GPUs by, the
// batch is measured on the first alone. (Found on two H100s: the launch
// tuning stopped the run with "the unmodified seed failed on GPU 0".)
TEST_F(GpuEvaluatorGpu, ATuningTheSeedCannotLaunchIsMeasuredOnTheFirstGpuAlone) {
  if (gi::fitness::probe_cuda().gpus.size() < 2) GTEST_SKIP() << "needs two CUDA devices";
  config.devices = {0, 1};
  gi::GpuEvaluator evaluator(seed, spec, config);
  evaluator.begin_generation(0, 3);
  evaluator.set_tuning(gi::Tuning{1024, {}});
  const std::vector<std::string> texts = {"", "define:BSPLINE_PATH=1", "define:BSPLINE_PATH=2"};
  std::vector<gi::grammar::Patch> patches;
  for (const auto& t : texts) patches.push_back(gi::grammar::parse_patch(t));
  const auto r = evaluator.evaluate(patches);
  ASSERT_EQ(r.size(), texts.size());
  EXPECT_EQ(r[0].status, gi::EvalStatus::LaunchError) << gi::to_string(r[0].status) << " " << r[0].message;
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i].valid()) {
      EXPECT_EQ(r[i].device, 0) << texts[i];
      EXPECT_DOUBLE_EQ(r[i].median_ms, r[i].device_median_ms) << texts[i];
    }
}

}  // namespace
