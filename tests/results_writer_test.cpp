// evolved/<gpu>/<family>-<kernel>/ from synthetic inputs: the files, a diff
// that `patch -p1` applies from the repository root, result.json's required
// fields, and the README table over every kernel folder. CPU only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "gi/publish/results_writer.hpp"
#include "gi/seed/seed.hpp"
#include "gi/publish/versions.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

const char* kSeedSource =
    "extern \"C\" __global__ void k(const float* in, float* out, int n) {\n"
    "    int i;\n"
    "    i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) {\n"
    "        out[i] = 2.0f * in[i];\n"
    "    }\n"
    "}\n";

const char* kEvolvedSource =
    "extern \"C\" __global__ void k(const float* __restrict__ in, float* out, int n) {\n"
    "    int i;\n"
    "    i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) {\n"
    "        out[i] = 2.0f * __ldg(&in[i]);\n"
    "    }\n"
    "}\n";

class ResultsWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gi-results-" + std::to_string(::getpid()) + "-" +
                                         std::to_string(std::random_device{}()));
    fs::create_directories(root_ / "seeds/demo/scale");
    std::ofstream(root_ / "seeds/demo/scale/kernel.cu") << kSeedSource;
  }
  void TearDown() override { fs::remove_all(root_); }

  static gi::ResultRecord record(const std::string& family, const std::string& kernel, double seed_ms,
                                 double evolved_ms) {
    gi::ResultRecord r;
    r.family = family;
    r.kernel = kernel;
    r.run_id = kernel + "-42";
    r.date = "2026-11-20T10:00:00Z";
    r.versions = {{"gpu", "NVIDIA H200"}, {"gpu_slug", "nvidia-h200"}, {"driver", "13.0"}, {"nvrtc", "13.0"},
                  {"gi_commit", "abc"}};
    r.seed_source = kSeedSource;
    r.evolved_source = kEvolvedSource;
    r.patch_text = "restrict:in ldg:<_kernel.cu_5>";
    std::vector<gi::fitness::PairedSample> pairs;
    for (int i = 0; i < 30; ++i) pairs.push_back({seed_ms, evolved_ms});
    r.comparison = gi::summarize_comparison(pairs, 4.2e8, 4.2e12);
    r.comparison.gpu = "NVIDIA H200";
    r.comparison.seed_tuning = {128, {}};
    r.comparison.evolved_tuning = {256, {"--use_fast_math"}};
    for (int i = 0; i < 5; ++i) {
      gi::fitness::CheckReport c;
      c.values_checked = 4'000'000;
      c.output_digest = "0123456789abcdef";
      c.max_abs_error = 1e-6;
      r.validation.workloads.push_back(gi::judge_workload("validate:" + std::to_string(i), c, c));
    }
    gi::summarize_validation(r.validation);
    r.validation.memcheck = gi::judge_sanitizer("memcheck", 0, "========= ERROR SUMMARY: 0 errors\n");
    r.validation.racecheck.tool = "racecheck";
    r.validation.racecheck.status = "skipped";
    r.validation.racecheck.reason = "compute-sanitizer not found";
    r.edits = nlohmann::json::array({{{"edit", "ldg:<_kernel.cu_5>"}, {"contribution", 0.25}},
                                     {{"edit", "restrict:in"}, {"contribution", 0.02}}});
    return r;
  }

  fs::path root_;
};

TEST_F(ResultsWriter, WritesTheKernelFolderWithEveryFile) {
  const fs::path dir = gi::write_result(root_ / "evolved", record("demo", "scale", 0.2, 0.1));
  EXPECT_EQ(dir, root_ / "evolved/nvidia-h200/demo-scale");
  EXPECT_EQ(gi::read_text_file(dir / "kernel.cu"), kEvolvedSource);
  EXPECT_EQ(gi::read_text_file(dir / "patch.gi"), "restrict:in ldg:<_kernel.cu_5>\n");
  const std::string diff = gi::read_text_file(dir / "kernel.diff");
  EXPECT_EQ(diff.rfind("--- a/seeds/demo/scale/kernel.cu\n+++ b/seeds/demo/scale/kernel.cu\n", 0), 0u) << diff;
  EXPECT_TRUE(fs::exists(root_ / "evolved/nvidia-h200/README.md"));
}

TEST_F(ResultsWriter, DiffAppliesWithPatchP1FromTheRepositoryRoot) {
  const fs::path dir = gi::write_result(root_ / "evolved", record("demo", "scale", 0.2, 0.1));
  const std::string command = "cd '" + root_.string() + "' && patch -p1 --quiet < '" + (dir / "kernel.diff").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(gi::read_text_file(root_ / "seeds/demo/scale/kernel.cu"), kEvolvedSource);
}

// A user's seed (gi init) lives outside seeds/: the diff names its
// kernel.cu as it was given, so patch -p1 applies it where the user stands.
TEST_F(ResultsWriter, AUsersSeedIsNamedWhereItIs) {
  gi::ResultRecord r = record("user", "scale", 0.2, 0.1);
  r.seed_path = "user/scale/kernel.cu";
  const fs::path dir = gi::write_result(root_ / "evolved", r);
  const std::string diff = gi::read_text_file(dir / "kernel.diff");
  EXPECT_EQ(diff.rfind("--- a/user/scale/kernel.cu\n+++ b/user/scale/kernel.cu\n", 0), 0u) << diff;
  EXPECT_EQ(nlohmann::json::parse(gi::read_text_file(dir / "result.json"))["seed"], "user/scale/kernel.cu");
}

TEST_F(ResultsWriter, ResultJsonHasEveryRequiredField) {
  const fs::path dir = gi::write_result(root_ / "evolved", record("demo", "scale", 0.2, 0.1));
  const auto j = nlohmann::json::parse(gi::read_text_file(dir / "result.json"));
  for (const char* key : {"gpu", "driver", "date", "run_id", "seed_median_ms", "evolved_median_ms", "speedup",
                          "speedup_ci_low", "memory_floor_ms", "seed_floor_fraction", "evolved_floor_fraction",
                          "bandwidth_tb_s", "tuning", "validation", "sanitizer", "edits", "review"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"workloads", "output_values", "max_abs_error", "max_rel_error", "passed"})
    EXPECT_TRUE(j["validation"].contains(key)) << "validation." << key;
  EXPECT_EQ(j["gpu"], "NVIDIA H200");
  EXPECT_EQ(j["driver"], "13.0");
  EXPECT_EQ(j["run_id"], "scale-42");
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
  EXPECT_NEAR(j["memory_floor_ms"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(j["seed_floor_fraction"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(j["evolved_floor_fraction"].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(j["bandwidth_tb_s"].get<double>(), 4.2, 1e-12);
  EXPECT_EQ(j["tuning"]["seed"]["block_size"], 128);
  EXPECT_EQ(j["tuning"]["evolved"]["options"][0], "--use_fast_math");
  EXPECT_EQ(j["validation"]["workloads"], 5);
  EXPECT_EQ(j["validation"]["output_values"], 20'000'000);
  EXPECT_EQ(j["validation"]["passed"], true);
  EXPECT_EQ(j["sanitizer"]["memcheck"]["status"], "passed");
  EXPECT_EQ(j["sanitizer"]["racecheck"]["status"], "skipped");
  EXPECT_EQ(j["sanitizer"]["racecheck"]["reason"], "compute-sanitizer not found");
  ASSERT_EQ(j["edits"].size(), 2u);
  EXPECT_EQ(j["edits"][0]["contribution"], 0.25);
  EXPECT_EQ(j["review"], false);
}

TEST_F(ResultsWriter, ReadmeTableListsEveryKernelAndFlagsReview) {
  gi::write_result(root_ / "evolved", record("demo", "scale", 0.2, 0.1));
  gi::write_result(root_ / "evolved", record("bspline", "deformation_field", 2.4, 0.2));  // 12x
  fs::create_directories(root_ / "evolved/nvidia-h200/broken-kernel");
  std::ofstream(root_ / "evolved/nvidia-h200/broken-kernel/result.json") << "{ not json";
  gi::write_results_readme(root_ / "evolved/nvidia-h200");
  const std::string readme = gi::read_text_file(root_ / "evolved/nvidia-h200/README.md");
  const auto bspline = readme.find("| bspline/deformation_field | 2.4000 | 0.2000 | 12.000x [12.000x] **review** |");
  const auto broken = readme.find("| broken-kernel |");
  const auto demo = readme.find("| demo/scale | 0.2000 | 0.1000 | 2.000x [2.000x] | - | 50% / 100% | passed, 5 workloads, "
                                "20000000 values, max abs 1e-06 | passed | skipped | scale-42 | 2026-11-20T10:00:00Z |");
  ASSERT_NE(bspline, std::string::npos) << readme;
  ASSERT_NE(broken, std::string::npos) << readme;
  ASSERT_NE(demo, std::string::npos) << readme;
  EXPECT_LT(broken, bspline);  // sorted by folder name: broken-kernel, bspline-deformation_field, demo-scale
  EXPECT_LT(bspline, demo);
  EXPECT_NE(readme.find("result.json unreadable"), std::string::npos) << readme;
  // sqrt(12 * 2): the two readable kernels, the broken one not counted.
  EXPECT_NE(readme.find("Geometric-mean speed-up over the tuned seeds: **4.899x** over 2 kernels."), std::string::npos)
      << readme;
}

// `gi results-table`: a kernel folder copied in from a run published
// elsewhere gets its row, and the table is over every folder, not the run's.
TEST_F(ResultsWriter, ResultsTableCommandWritesTheTableOverEveryFolder) {
  gi::write_result(root_ / "evolved", record("demo", "scale", 0.2, 0.1));
  gi::write_result(root_ / "elsewhere", record("bspline", "deformation_field", 2.4, 0.2));
  fs::copy(root_ / "elsewhere/nvidia-h200/bspline-deformation_field", root_ / "evolved/nvidia-h200/bspline-deformation_field");
  EXPECT_EQ(gi::read_text_file(root_ / "evolved/nvidia-h200/README.md").find("bspline/deformation_field"), std::string::npos);
  const auto r = gi::test::run_gi("results-table \"" + (root_ / "evolved/nvidia-h200").string() + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string readme = gi::read_text_file(root_ / "evolved/nvidia-h200/README.md");
  EXPECT_NE(readme.find("| bspline/deformation_field |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| demo/scale |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("over 2 kernels"), std::string::npos) << readme;
  EXPECT_NE(gi::test::run_gi("results-table \"" + (root_ / "nothing").string() + "\"").exit_code, 0);
  // A trailing slash, as a shell completes the folder, keeps its name as the title.
  ASSERT_EQ(gi::test::run_gi("results-table \"" + (root_ / "evolved/nvidia-h200/").string() + "\"").exit_code, 0);
  EXPECT_NE(gi::read_text_file(root_ / "evolved/nvidia-h200/README.md").find("# Evolved kernels: nvidia-h200\n"),
            std::string::npos);
}

// A seed with switches: the diff is against its plain path (plain.cu, written
// beside it), patch.gi is pinned, and the result says what GI added beyond
// the best switch setting.
TEST_F(ResultsWriter, ASeedWithSwitchesIsPublishedAgainstItsPlainPath) {
  auto r = record("demo", "scale", 0.2, 0.1);
  r.seed_has_switches = true;
  r.seed_sha256 = std::string(64, 'a');
  std::vector<gi::fitness::PairedSample> pairs;
  for (int i = 0; i < 30; ++i) pairs.push_back({0.125, 0.1});
  r.over_switches = gi::summarize_comparison(pairs, 4.2e8, 4.2e12);
  r.over_switches->baseline_patch = "define:PATH=1";
  const fs::path dir = gi::write_result(root_ / "evolved", r);
  EXPECT_EQ(gi::read_text_file(dir / "plain.cu"), kSeedSource);
  EXPECT_EQ(gi::read_text_file(dir / "patch.gi"), "@seed=" + std::string(64, 'a') + "\nrestrict:in ldg:<_kernel.cu_5>\n");
  const std::string command = "cd '" + dir.string() + "' && patch -p1 --quiet < kernel.diff";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(gi::read_text_file(dir / "plain.cu"), kEvolvedSource);
  const auto j = nlohmann::json::parse(gi::read_text_file(dir / "result.json"));
  EXPECT_EQ(j["over_best_switches"]["switches"], "define:PATH=1");
  EXPECT_DOUBLE_EQ(j["over_best_switches"]["speedup"].get<double>(), 1.25);
  const std::string readme = gi::read_text_file(root_ / "evolved/nvidia-h200/README.md");
  EXPECT_NE(readme.find("| 2.000x [2.000x] | 1.250x [1.250x] vs define:PATH=1 |"), std::string::npos) << readme;
}

TEST_F(ResultsWriter, GpuFolderFromTheMeasuredDeviceWhenVersionsLackASlug) {
  auto r = record("demo", "scale", 0.2, 0.1);
  r.versions = nlohmann::json::object();
  r.comparison.gpu = "NVIDIA H100 80GB HBM3";
  const fs::path dir = gi::write_result(root_ / "evolved", r);
  EXPECT_EQ(dir, root_ / "evolved/nvidia-h100-80gb-hbm3/demo-scale");
  const auto j = nlohmann::json::parse(gi::read_text_file(dir / "result.json"));
  EXPECT_EQ(j["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(j["driver"].is_null());
}

// result.json's "driver" names the release read from /proc/driver/nvidia/version.
TEST(DriverRelease, ReadFromBothKernelModuleLineForms) {
  EXPECT_EQ(gi::driver_release_from("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sun Oct 5 2025"),
            "580.159.04");
  EXPECT_EQ(gi::driver_release_from(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)"),
            "580.159.04");
  EXPECT_EQ(gi::driver_release_from("NVRM version: something else"), "");
  EXPECT_EQ(gi::driver_release_from("Kernel Module for x86_64"), "");
}

}  // namespace

namespace gi {
namespace {

// The commit is compiled into versions.cpp alone (gi/CMakeLists.txt), so a
// commit rebuilds one file; every result still names it.
TEST(Versions, NameTheCommitGiWasBuiltFrom) {
  const std::string commit = gi_commit();
  ASSERT_FALSE(commit.empty());
  if (std::filesystem::exists(std::filesystem::path(GI_SOURCE_DIR) / ".git")) {
    EXPECT_TRUE(std::regex_match(commit, std::regex("(.*-g)?[0-9a-f]{12}(-dirty)?"))) << commit;
  }
}

}  // namespace
}  // namespace gi
