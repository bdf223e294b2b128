// The GPU evaluator's batch rules, on a real GPU: identical variants are
// measured once ("cached"), and variants whose sources differ but whose
// binaries are the same share one measurement ("same_binary"). Skipped
// without a CUDA device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "fitness/cuda_devices.hpp"
#include "fitness/kernel_spec.hpp"
#include "gi/gpu_evaluator.hpp"
#include "gi/seed.hpp"
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

TEST(GpuEvaluatorGpu, SameBinaryIsMeasuredOnceAndIdenticalVariantsAreCached) {
  const auto cuda = gi::fitness::probe_cuda();
  if (!cuda.driver_ok || cuda.gpus.empty()) GTEST_SKIP() << "no CUDA device: " << cuda.message;
  const fs::path dir = gi::test::source_dir() / "seeds/bspline/deformation_field";
  const gi::Seed seed = gi::load_seed(dir);
  const auto spec = gi::fitness::load_kernel_spec(dir);
  const fs::path cache = fs::temp_directory_path() / ("gi-evaluator-test-" + std::to_string(::getpid()));
  gi::GpuEvaluatorConfig config;
  config.worker_executable = gi_binary();
  config.cache_dir = cache;
  config.jobs = 4;
  config.timing.budget_seconds = 0.5;
  {
    gi::GpuEvaluator evaluator(seed, spec, config);
    evaluator.begin_generation(0, 7);
    // A second copy of "position.w = 0.0f;" changes the source, not the code.
    const std::string duplicate_store = "<_kernel.cu_85>+<_kernel.cu_85>";
    ASSERT_NE(seed.source.find("        position.w = 0.0f;"), std::string::npos);
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
  fs::remove_all(cache);
}

}  // namespace
