// The seed-versus-evolved comparison: the floor, fraction, ratio and review
// arithmetic on synthetic samples (CPU); ComparisonGpu.* measure the copy
// bandwidth and the convolution seed against itself, and are SKIPPED ("no
// CUDA device: ...") without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fitness/gpu/bandwidth.hpp"
#include "fitness/process/subprocess.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/publish/comparison.hpp"
#include "test_support.hpp"

namespace {

using gi::fitness::PairedSample;

std::vector<PairedSample> pairs(double seed_ms, double evolved_ms, int n = 30, double jitter = 0.01) {
  std::vector<PairedSample> p;
  for (int i = 0; i < n; ++i) {
    const double wobble = 1 + jitter * ((i % 5) - 2) / 2.0;  // +-1%, deterministic
    p.push_back({seed_ms * wobble, evolved_ms / wobble});
  }
  return p;
}

TEST(MemoryFloor, BytesOverBandwidthInMilliseconds) {
  EXPECT_NEAR(gi::memory_floor_ms(4.2e9, 4.2e12), 1.0, 1e-15);
  EXPECT_NEAR(gi::memory_floor_ms(289e6, 4.0e12), 0.07225, 1e-15);
  EXPECT_EQ(gi::memory_floor_ms(0, 4e12), 0);
  EXPECT_EQ(gi::memory_floor_ms(1e9, 0), 0);  // unknown bandwidth: no floor, not infinity
}

TEST(SummarizeComparison, SpeedupFloorAndFractions) {
  // 2 ms against 1 ms; 1.26e9 bytes at 4.2e12 B/s is a 0.3 ms floor.
  const auto r = gi::summarize_comparison(pairs(2.0, 1.0), 1.26e9, 4.2e12);
  EXPECT_DOUBLE_EQ(r.seed.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(r.evolved.median_ms, 1.0);
  EXPECT_EQ(r.seed.samples, 30);
  EXPECT_GT(r.seed.relative_spread, 0);
  EXPECT_LT(r.seed.relative_spread, 0.011);
  EXPECT_DOUBLE_EQ(r.speedup, 2.0);
  EXPECT_GT(r.speedup_ci_low, 1.9);
  EXPECT_LE(r.speedup_ci_low, 2.0);
  EXPECT_NEAR(r.memory_floor_ms, 0.3, 1e-12);
  EXPECT_NEAR(r.seed_floor_fraction, 0.15, 1e-12);
  EXPECT_NEAR(r.evolved_floor_fraction, 0.3, 1e-12);
  EXPECT_FALSE(r.review);
  EXPECT_EQ(r.samples.size(), 30u);
}

TEST(SummarizeComparison, ReviewFlagAboveTenTimes) {
  EXPECT_FALSE(gi::summarize_comparison(pairs(10.0, 1.0, 30, 0), 1e9, 4e12).review);  // exactly 10x: not above
  EXPECT_TRUE(gi::summarize_comparison(pairs(10.5, 1.0, 30, 0), 1e9, 4e12).review);
  EXPECT_FALSE(gi::summarize_comparison(pairs(1.0, 1.0), 1e9, 4e12).review);
}

TEST(SummarizeComparison, NoSamplesIsAnError) {
  EXPECT_THROW(gi::summarize_comparison({}, 1e9, 4e12), std::invalid_argument);
}

TEST(SummarizeComparison, JsonRoundTripAndText) {
  auto r = gi::summarize_comparison(pairs(3.0, 2.0), 2e9, 4e12);
  r.gpu = "NVIDIA H200";
  r.seed_tuning = {128, {}};
  r.evolved_tuning = {256, {"--use_fast_math"}};
  r.patch = "<_kernel.cu_30>";
  r.data_seed = 42;
  const auto back = gi::ComparisonResult::from_json(r.to_json());
  EXPECT_EQ(back.to_json(), r.to_json());
  EXPECT_EQ(back.evolved_tuning, r.evolved_tuning);
  EXPECT_DOUBLE_EQ(r.to_json()["bandwidth_tb_s"].get<double>(), 4.0);
  const std::string text = gi::format_comparison(r);
  EXPECT_NE(text.find("speed-up 1.500x"), std::string::npos) << text;
  EXPECT_NE(text.find("block 256 --use_fast_math"), std::string::npos) << text;
  EXPECT_EQ(text.find("REVIEW"), std::string::npos) << text;
}

// ---- on the GPU ------------------------------------------------------------

bool gpu_available() {
  static const auto env = gi::fitness::probe_cuda();
  return env.driver_ok && !env.gpus.empty();
}

TEST(ComparisonGpu, CopyBandwidthIsPlausible) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device: " << gi::fitness::probe_cuda().message;
  const double bw = gi::fitness::measure_copy_bandwidth(0);
  std::cout << "copy bandwidth " << bw * 1e-12 << " TB/s (read + write)\n";
  EXPECT_GT(bw, 1e11);  // above PCIe-class speed
  EXPECT_LT(bw, 2e13);  // below any HBM of today
}

TEST(ComparisonGpu, SeedAgainstItselfIsAboutOne) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device: " << gi::fitness::probe_cuda().message;
  const auto dir = gi::test::source_dir() / "seeds/tools/convolution_x";
  const gi::Seed seed = gi::load_seed(dir);
  const auto spec = gi::fitness::load_kernel_spec(dir);
  gi::ComparisonOptions o;
  o.rounds = 30;
  o.data_seed = 7;
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-gpu-test-cache";
  const gi::Tuning t{spec.default_block_size, {}};
  const auto r = gi::compare(seed, spec, {}, t, t, o);
  std::cout << gi::format_comparison(r);
  EXPECT_EQ(r.samples.size(), 30u);
  EXPECT_GT(r.seed.median_ms, 0);
  EXPECT_GT(r.speedup, 0.8);
  EXPECT_LT(r.speedup, 1.25);
  EXPECT_LT(r.speedup_ci_low, 1.1);
  EXPECT_GT(r.memory_floor_ms, 0);
  EXPECT_GT(r.seed_floor_fraction, 0);
  EXPECT_LT(r.seed_floor_fraction, 1.5);  // nothing beats the copy by half again
  EXPECT_FALSE(r.review);
}

// `gi bench --kernel` runs any source in its own process: a kernel that never
// ends must end the bench with a message, not hang it.
TEST(ComparisonGpu, BenchGivesUpOnAHangingKernel) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device: " << gi::fitness::probe_cuda().message;
  const auto seed_dir = gi::test::source_dir() / "seeds/bspline/deformation_field";
  std::string source = gi::read_text_file(seed_dir / "kernel.cu");
  const std::string anchor = "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n";
  ASSERT_NE(source.rfind(anchor), std::string::npos);
  // A volatile load in the condition: the loop cannot be optimised away. In
  // the plain path (the last index line; the first is the warp path's).
  source.insert(source.rfind(anchor) + anchor.size(),
                "    while (((volatile const int*)activeVoxels)[0] != -12345) {\n        tid = tid + 1;\n    }\n");
  const auto dir = std::filesystem::temp_directory_path() / ("gi-bench-hang-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "hang.cu") << source;
  }
  const std::string gi = gi::test::gi_binary();
  const auto r = gi::fitness::run_subprocess({gi, "bench", seed_dir.string(), "--kernel", (dir / "hang.cu").string(),
                                              "--no-cache", "--rounds", "3", "--timeout", "20"},
                                             dir / "bench.log");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 124) << r.output;
  EXPECT_NE(r.output.find("a kernel may hang"), std::string::npos) << r.output;
}

}  // namespace
