// gi evolve-all without a GPU: every stage of every kernel's run (tuning,
// switch baseline, search, retuning, minimisation, publication) runs on a
// deterministic stand-in evaluator, so an evolve-all interrupted at many
// points and resumed can be compared byte for byte with one that was not.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "fitness/process/atomic_file.hpp"
#include "gi/run/evolve_all.hpp"
#include "stand_in_evolve_all.hpp"
#include "stand_in_results.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;
using test::Interrupted;
using test::Interrupter;
using test::stand_in_backend;

struct EvolveAll : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gi_evolve_all_test_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { fs::remove_all(dir); }
  void TearDown() override { fs::remove_all(dir); }

  static constexpr const char* kBroken = test::kStandInBroken;
  static constexpr const char* kRejected = test::kStandInRejected;

  EvolveAllOptions options(const fs::path& root) { return test::stand_in_options(root, test::source_dir() / "seeds"); }
  // One call of evolve-all that is interrupted after `evaluations_before_stop` evaluations (< 0: never).
  EvolveAllSummary call(const EvolveAllOptions& o, long evaluations_before_stop, bool* interrupted = nullptr) {
    Interrupter interrupter{evaluations_before_stop};
    auto backend_for = [&](const EvolveOptions& run) { return stand_in_backend(run, interrupter, kBroken, kRejected); };
    try {
      const EvolveAllSummary s = evolve_all(o, backend_for);
      if (interrupted) *interrupted = false;
      return s;
    } catch (const Interrupted&) {
      if (interrupted) *interrupted = true;
      return {};
    }
  }
};

TEST_F(EvolveAll, InterruptedAndResumedWritesWhatAnUninterruptedRunWrites) {
  const EvolveAllSummary whole = call(options(dir / "whole"), -1);
  EXPECT_EQ(whole.complete, 2);
  EXPECT_EQ(whole.rejected, 1);
  EXPECT_EQ(whole.failed, 1);
  EXPECT_TRUE(whole.finished());

  // Cut every call short after a few evaluations (mid-tuning, mid-generation,
  // mid-minimisation, at publication), then go on with the same folder.
  const EvolveAllOptions o = options(dir / "split");
  int calls = 0;
  bool interrupted = true;
  EvolveAllSummary split;
  for (long cut = 7; interrupted; cut = cut * 3 / 2 + 5) {
    ASSERT_LT(++calls, 60) << "evolve-all did not finish";
    split = call(o, cut, &interrupted);
  }
  EXPECT_GT(calls, 5);
  EXPECT_EQ(split.complete, 2);

  test::expect_same_results(dir / "whole", dir / "split", "the resumed run");
}

TEST_F(EvolveAll, AFailedKernelIsRecordedWithItsStageAndTheRunGoesOn) {
  call(options(dir), -1);
  const nlohmann::json state = nlohmann::json::parse(read_text_file(dir / "out/evolve_all.json"));
  std::map<std::string, nlohmann::json> by_kernel;
  for (const auto& k : state.at("kernels")) by_kernel[k.at("kernel").get<std::string>()] = k;
  ASSERT_EQ(by_kernel.size(), 4u);
  const nlohmann::json& broken = by_kernel.at("tools/max_vector_length");
  EXPECT_EQ(broken.at("status"), "failed");
  EXPECT_EQ(broken.at("stage"), "tuning");
  EXPECT_NE(broken.at("error").get<std::string>().find("tuning"), std::string::npos);
  EXPECT_EQ(by_kernel.at("tools/intensity_minmax").at("status"), "rejected");
  // Kernels after the failed one in library order ran to the end.
  EXPECT_EQ(by_kernel.at("tools/sum_reduction").at("status"), "complete");
  EXPECT_EQ(by_kernel.at("similarity/ssd_gradient").at("status"), "complete");
  // The report's list of what is missing from the GPU folder, and why.
  const nlohmann::json failures = nlohmann::json::parse(read_text_file(dir / "evolved/stand-in-gpu/failures.json"));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].at("kernel"), "tools/intensity_minmax");
  EXPECT_EQ(failures[0].at("stage"), "validation");
  EXPECT_EQ(failures[1].at("kernel"), "tools/max_vector_length");
  EXPECT_EQ(failures[1].at("stage"), "tuning");
  EXPECT_NE(failures[1].at("error").get<std::string>().find("tuning"), std::string::npos);

  // A later call leaves recorded kernels alone unless asked to retry the
  // failed and rejected ones.
  EvolveAllOptions again = options(dir);
  const auto left_alone = call(again, -1);
  EXPECT_EQ(left_alone.failed, 1);
  EXPECT_EQ(left_alone.rejected, 1);
  again.retry_failed = true;
  const auto retried = call(again, -1);
  EXPECT_EQ(retried.failed, 1);  // still broken, recorded again
  EXPECT_EQ(retried.rejected, 1);
  EXPECT_EQ(retried.complete, 2);
}

TEST_F(EvolveAll, TheBudgetEndsEachSearchAtAGenerationEnd) {
  EvolveAllOptions o = options(dir);
  o.kernels = "similarity/ssd_gradient";
  o.budget_per_kernel_minutes = 1e-9;  // spent by the first generation
  EXPECT_EQ(call(o, -1).complete, 1);
  std::ifstream in(dir / "out/similarity-ssd_gradient/generations.jsonl");
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, 1);
  const nlohmann::json stages = nlohmann::json::parse(read_text_file(dir / "out/similarity-ssd_gradient/stage_seconds.json"));
  for (const char* stage : {"tuning", "search", "retune", "minimise", "validation_and_comparison"})
    EXPECT_TRUE(stages.contains(stage)) << stage;
}

TEST_F(EvolveAll, APlanOfAnotherRunIsKeptAndADamagedPlanIsNamed) {
  EvolveAllOptions o = options(dir);
  o.kernels = "similarity/ssd_gradient";
  call(o, -1);
  EvolveAllOptions other = o;
  other.kernels = "tools/*";
  std::vector<std::string> said;
  other.say = [&](const std::string& s) { said.push_back(s); };
  EXPECT_EQ(call(other, -1).complete, 1);  // the folder's own plan: one kernel
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said.front().find("differ in: kernels"), std::string::npos) << said.front();

  std::ofstream(dir / "out/evolve_all.json") << "{\"format\": \"gi-evolve-all-1\", \"plan\": {}, \"kernels\": [{\"kernel\": 3}]}";
  try {
    call(o, -1);
    FAIL() << "a damaged plan was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("evolve_all.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernels[0]"), std::string::npos) << e.what();
  }
}

TEST(SelectSeeds, GlobsOverFamilyAndKernelInLibraryOrder) {
  const fs::path root = test::source_dir() / "seeds";
  const auto tools = select_seeds(root, "tools/sum_reduction, bspline/deformation_*");
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0].filename(), "deformation_field");
  EXPECT_EQ(tools[1].filename(), "sum_reduction");
  EXPECT_EQ(select_seeds(root, "*").size(), find_seed_dirs(root).size());
  EXPECT_THROW(select_seeds(root, "tools/no_such_kernel"), std::runtime_error);
  EXPECT_THROW(select_seeds(root, " , "), std::runtime_error);
}

TEST(AutoDataEvery, SharesDataOnlyWhereMakingItIsSlow) {
  EXPECT_EQ(auto_data_every(0.05, 100), 1);  // a B-spline set: under a generation's evaluation
  EXPECT_EQ(auto_data_every(2.0, 100), 3);   // 2 s against 0.67 s per generation at 150/s
  EXPECT_EQ(auto_data_every(60, 100), 8);    // never more than 8
}

}  // namespace
}  // namespace gi
