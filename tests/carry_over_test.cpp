// gi carry-over without a GPU: which kernels pair up across two GPU folders,
// what an unreadable record does, and the table's arithmetic. The timing
// itself (measure_carry_over) runs on the device (scripts/gpu_session.sh --carry-over).
#include <gtest/gtest.h>

#include <unistd.h>

#include "fitness/process/atomic_file.hpp"
#include "gi/publish/carry_over.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;

struct CarryOver : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gi_carry_over_test_" + std::to_string(::getpid()));
  void SetUp() override { fs::remove_all(dir); }
  void TearDown() override { fs::remove_all(dir); }

  void publish(const std::string& gpu, const std::string& kernel, const std::string& patch, unsigned block,
               double speedup) {
    std::string folder = kernel;
    std::replace(folder.begin(), folder.end(), '/', '-');
    const fs::path f = dir / gpu / folder;
    fs::create_directories(f);
    fitness::write_file_atomically(f / "patch.gi", patch + "\n");
    fitness::write_file_atomically(
        f / "result.json",
        nlohmann::json{{"kernel", kernel},
                       {"tuning", {{"seed", {{"block_size", 128}, {"options", nlohmann::json::array()}}},
                                   {"evolved", {{"block_size", block}, {"options", nlohmann::json::array()}}}}},
                       {"speedup", speedup},
                       {"speedup_ci_low", speedup * 0.99}}
            .dump());
  }
};

ComparisonResult measured(double seed_ms, double variant_ms) {
  std::vector<fitness::PairedSample> pairs;
  for (int i = 0; i < 30; ++i) pairs.push_back({seed_ms * (1 + 0.001 * (i % 3)), variant_ms * (1 + 0.001 * (i % 4))});
  return summarize_comparison(pairs, 1e8, 3e12);
}

TEST_F(CarryOver, KernelsPublishedForBothGpusPairUpInNameOrder) {
  publish("a", "tools/sum_reduction", "define:SUM_PATH=1", 256, 400);
  publish("a", "bspline/deformation_field", "define:BSPLINE_PATH=2", 128, 2.4);
  publish("a", "tools/convolution_x", "", 128, 1.0);  // only on a
  publish("b", "tools/sum_reduction", "define:SUM_PATH=1", 512, 420);
  publish("b", "bspline/deformation_field", "define:BSPLINE_PATH=1", 256, 2.5);
  fs::create_directories(dir / "b/resampling-trilinear");  // a folder without a result
  const auto pairs = carry_over_pairs(dir / "a", dir / "b", test::source_dir() / "seeds");
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].kernel, "bspline/deformation_field");
  EXPECT_EQ(pairs[0].seed_dir, test::source_dir() / "seeds/bspline/deformation_field");
  EXPECT_EQ(pairs[0].here.patch_text, "define:BSPLINE_PATH=2\n");
  EXPECT_EQ(pairs[0].from.evolved_tuning.block_size, 256u);
  EXPECT_EQ(pairs[1].kernel, "tools/sum_reduction");
  EXPECT_TRUE(pairs[1].error.empty());
  EXPECT_EQ(carry_over_pairs(dir / "a", dir / "b", test::source_dir() / "seeds", "tools/*").size(), 1u);
  EXPECT_THROW(carry_over_pairs(dir / "a", dir / "missing", "seeds"), std::runtime_error);
}

TEST_F(CarryOver, AnUnreadableRecordIsNamedAndTheOthersGoOn) {
  publish("a", "tools/sum_reduction", "define:SUM_PATH=1", 256, 400);
  publish("b", "tools/sum_reduction", "define:SUM_PATH=1", 512, 420);
  fitness::write_file_atomically(dir / "b/tools-sum_reduction/result.json", R"({"kernel": "tools/sum_reduction"})");
  const auto pairs = carry_over_pairs(dir / "a", dir / "b", "seeds");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_NE(pairs[0].error.find("b/tools-sum_reduction/result.json"), std::string::npos) << pairs[0].error;
  // Such a pair is not timed: its row carries the error.
  const auto rows = measure_carry_over(pairs, {}, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].own.has_value());
  EXPECT_NE(carry_over_markdown("a", "b", rows, nlohmann::json::object()).find("error:"), std::string::npos);
}

TEST_F(CarryOver, TheTableGivesTheOtherKernelsTimeOverTheOwnAndTheirGeometricMean) {
  CarryOverRow same, worse;
  same.pair.kernel = "tools/sum_reduction";
  same.pair.here.patch_text = same.pair.from.patch_text = "define:SUM_PATH=1\n";
  same.own = measured(1.0, 0.5);
  same.other = measured(1.0, 0.5);
  worse.pair.kernel = "bspline/deformation_field";
  worse.pair.here.patch_text = "define:BSPLINE_PATH=2\n";
  worse.pair.from.patch_text = "define:BSPLINE_PATH=1\n";
  worse.own = measured(1.0, 0.8);
  worse.other = measured(1.0, 1.25);  // slower than the tuned seed here
  EXPECT_NEAR(carry_over_time_ratio(same), 1.0, 0.01);
  EXPECT_NEAR(carry_over_time_ratio(worse), 1.5625, 0.01);
  const nlohmann::json versions = {{"gpu", "NVIDIA H200"}, {"driver", "580.159.04 (CUDA 13.0)"},
                                   {"gi_commit", "abc123"}, {"date", "2026-11-25T21:39:00Z"}};
  const std::string table = carry_over_markdown("h200", "h100", {same, worse}, versions);
  EXPECT_NE(table.find("Measured on NVIDIA H200 (driver 580.159.04 (CUDA 13.0)), gi abc123, 2026-11-25T21:39:00Z"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| tools/sum_reduction |"), std::string::npos) << table;
  EXPECT_NE(table.find("| yes |"), std::string::npos) << table;
  EXPECT_NE(table.find("| no |"), std::string::npos) << table;
  EXPECT_NE(table.find("take 1.250x the time of h200's own (geometric mean over 2 kernels)"), std::string::npos) << table;
  EXPECT_NE(table.find("here, 1 is not with h100's kernel"), std::string::npos) << table;
  const nlohmann::json j = carry_over_json("h200", "h100", {same, worse}, versions);
  EXPECT_EQ(j.at("versions").at("gi_commit"), "abc123");
  EXPECT_EQ(j.at("measured_on"), "h200");
  EXPECT_NEAR(j.at("kernels")[1].at("other_time_over_own").get<double>(), 1.5625, 0.01);
}

}  // namespace
}  // namespace gi
