// gi/publish/run_summary.hpp: the compact record of a run that is published
// beside its kernel, from a fixture run directory. And the bound the
// repository relies on: publishing one kernel of a realistic run writes at
// most 50 KB of tracked files. CPU only.
#include <gtest/gtest.h>

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "gi/publish/results_writer.hpp"
#include "gi/publish/run_summary.hpp"
#include "gi/seed/seed.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;

class RunSummary : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gi-run-summary-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    run_ = dir_ / "tools-sum_reduction";
    fs::create_directories(run_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) { std::ofstream(run_ / name) << text; }

  // A run of `generations` x `population` evaluations: the seed (index -1)
  // at 2 ms, then a cycle of outcomes with times 0.5, 0.7, ...
  std::string evaluations(int generations, int population) {
    static const char* statuses[] = {"ok", "ok", "wrong_output", "compile_error", "timeout", "illegal_address"};
    std::string text;
    for (int g = 0; g < generations; ++g) {
      text += nlohmann::json{{"generation", g}, {"index", -1}, {"status", "ok"}, {"median_ms", 2.0}}.dump() + "\n";
      for (int i = 0; i < population; ++i) {
        const std::string status = statuses[i % 6];
        nlohmann::json e = {{"generation", g}, {"index", i}, {"status", status}, {"cached", i % 10 == 9},
                            {"same_binary", i % 10 == 8}, {"key", std::string(64, 'a') + "/b128/X=1"},
                            {"patch", "define:SUM_ITEMS=8 unroll:<for_kernel.cu_12>=4"}, {"message", ""}};
        e["median_ms"] = status == "ok" ? nlohmann::json(i % 2 ? 0.7 : 0.5) : nlohmann::json(nullptr);
        text += e.dump() + "\n";
      }
    }
    return text;
  }
  std::string generations(int n) {
    std::string text;
    for (int g = 0; g < n; ++g)
      text += nlohmann::json{{"generation", g}, {"seed_ms", 2.0}, {"best_ms", 0.5}, {"evaluations", 100 * (g + 1)},
                             {"evaluations_per_second", 123.456789}, {"elapsed_seconds", 1.5 * (g + 1)}}
                  .dump() +
              "\n";
    return text;
  }

  fs::path dir_, run_;
};

TEST_F(RunSummary, CountsEachEvaluationOnceAndSummarisesEveryGeneration) {
  write("config.json", R"({"seed_dir": "seeds/tools/sum_reduction", "search": {"algorithm": "gp"}})");
  write("versions.json", R"({"gpu": "NVIDIA H200", "driver": "580"})");
  write("stage_seconds.json", R"({"search": 30.0, "tuning": 3.0})");
  write("evaluator_stats.json", R"({"compiled": 12, "measured": 7})");
  write("evaluations.jsonl", evaluations(3, 10));
  write("generations.jsonl", generations(3));

  const nlohmann::json s = gi::run_summary(run_);
  EXPECT_EQ(s["format"], "gi-run-summary-1");
  EXPECT_EQ(s["run_id"], "tools-sum_reduction");
  EXPECT_EQ(s["config"]["seed_dir"], "seeds/tools/sum_reduction");
  EXPECT_EQ(s["versions"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(s["stage_seconds"]["search"], 30.0);
  EXPECT_EQ(s["evaluator_stats"]["measured"], 7);
  EXPECT_EQ(s["evaluations"], 30);  // the seed, re-measured each generation, is not counted
  const nlohmann::json& g = s["generations"];
  EXPECT_EQ(g["generation"], nlohmann::json({0, 1, 2}));
  EXPECT_EQ(g["total"], nlohmann::json({10, 10, 10}));
  EXPECT_EQ(g["seed_ms"], nlohmann::json({2.0, 2.0, 2.0}));
  EXPECT_EQ(g["best_ms"], nlohmann::json({0.5, 0.5, 0.5}));
  EXPECT_EQ(g["search_best_ms"], nlohmann::json({0.5, 0.5, 0.5}));
  // ok at i = 0, 1, 6, 7 (8 is same_binary, 9 cached): 0.5 0.7 0.5 0.7
  EXPECT_EQ(g["median_ms"], nlohmann::json({0.6, 0.6, 0.6}));
  const nlohmann::json expected = {{"ok", {4, 4, 4}},         {"wrong_output", {1, 1, 1}}, {"compile_error", {1, 1, 1}},
                                   {"timeout", {1, 1, 1}},    {"illegal_address", {1, 1, 1}},
                                   {"same_binary", {1, 1, 1}}, {"cached", {1, 1, 1}}};
  EXPECT_EQ(g["outcomes"], expected);
  EXPECT_EQ(nlohmann::json::parse(gi::run_summary_text(s)), s);  // the file's text is the same JSON
  EXPECT_EQ(s["search"]["evaluations_per_second"], 123.457);  // six significant digits
  EXPECT_EQ(s["search"]["elapsed_seconds"], 4.5);
}

TEST_F(RunSummary, ReadsGzippedEvaluationsAndLeavesOutWhatIsMissing) {
  write("generations.jsonl", generations(2));
  const std::string text = evaluations(2, 6);
  gzFile out = gzopen((run_ / "evaluations.jsonl.gz").c_str(), "wb");
  ASSERT_NE(out, nullptr);
  gzwrite(out, text.data(), static_cast<unsigned>(text.size()));
  gzclose(out);
  nlohmann::json s = gi::run_summary(run_);
  EXPECT_EQ(s["evaluations"], 12);
  EXPECT_FALSE(s.contains("config"));
  EXPECT_FALSE(s.contains("stage_seconds"));

  // Without evaluations: the logged times only, and no outcome counts.
  fs::remove(run_ / "evaluations.jsonl.gz");
  s = gi::run_summary(run_);
  EXPECT_TRUE(s["evaluations"].is_null());
  EXPECT_EQ(s["generations"]["generation"], nlohmann::json({0, 1}));
  EXPECT_FALSE(s["generations"].contains("outcomes"));
  EXPECT_TRUE(s["generations"]["best_ms"][0].is_null());
  EXPECT_EQ(s["generations"]["search_best_ms"][0], 0.5);
}

TEST_F(RunSummary, AMalformedLineIsNamedWithItsFileAndLine) {
  write("generations.jsonl", generations(2));
  write("evaluations.jsonl", "{\"generation\": 0, \"index\": -1, \"status\": \"ok\"}\n{\"generation\": 0, \"in\n");
  try {
    gi::run_summary(run_);
    FAIL() << "a malformed line must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((run_ / "evaluations.jsonl").string() + ":2:"), std::string::npos) << e.what();
  }
  write("evaluations.jsonl", "");
  write("stage_seconds.json", "{\"search\": ");
  try {
    gi::run_summary(run_);
    FAIL() << "a malformed file must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stage_seconds.json"), std::string::npos) << e.what();
  }
}

// The largest kernel published so far (its plain path and evolved source,
// from evolved/) with the summary of a 50-generation, 300-variant run: what
// one publication adds to the tracked tree, its GPU folder's README row
// included.
TEST_F(RunSummary, PublishingOneKernelWritesAtMostFiftyKilobytesOfTrackedFiles) {
  write("config.json", R"({"seed_dir": "seeds/blockmatching/ncc_block_matching", "search": {"algorithm": "gp"}})");
  write("versions.json", R"({"gpu": "NVIDIA H200", "gpu_slug": "nvidia-h200", "driver": "580"})");
  write("stage_seconds.json", R"({"search": 600.0, "tuning": 30.0, "validation_and_comparison": 60.0})");
  write("evaluator_stats.json", R"({"compiled": 12000, "measured": 7000, "worker_phases_seconds": {"check": 1}})");
  write("evaluations.jsonl", evaluations(50, 300));
  write("generations.jsonl", generations(50));
  EXPECT_GT(fs::file_size(run_.string() + "/evaluations.jsonl"), 3'000'000u);  // the raw record the tree does not keep

  fs::path largest;
  auto size = [](const fs::path& folder) {
    return fs::file_size(folder / "kernel.cu") + (fs::exists(folder / "plain.cu") ? fs::file_size(folder / "plain.cu") : 0);
  };
  for (const auto& gpu : fs::directory_iterator(gi::test::source_dir() / "evolved"))
    if (gpu.is_directory())
      for (const auto& folder : fs::directory_iterator(gpu.path()))
        if (fs::exists(folder.path() / "kernel.cu") && (largest.empty() || size(folder.path()) > size(largest)))
          largest = folder.path();
  ASSERT_FALSE(largest.empty()) << "no published kernel under evolved/";

  gi::ResultRecord r;
  r.family = "blockmatching";
  r.kernel = "ncc_block_matching";
  r.run_id = run_.filename().string();
  r.versions = {{"gpu", "NVIDIA H200"}, {"gpu_slug", "nvidia-h200"}};
  r.seed_has_switches = fs::exists(largest / "plain.cu");
  r.seed_source = gi::read_text_file(largest / (r.seed_has_switches ? "plain.cu" : "kernel.cu"));
  r.evolved_source = gi::read_text_file(largest / "kernel.cu");
  r.patch_text = "define:NCC_PATH=1 define:NCC_ITEMS=4 unroll:<for_kernel.cu_120>=4";
  r.comparison.gpu = "NVIDIA H200";
  r.run_summary = gi::run_summary(run_);
  const fs::path evolved = dir_ / "evolved";
  const fs::path folder = gi::write_result(evolved, r);

  std::uintmax_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(evolved))
    if (e.is_regular_file()) bytes += e.file_size();
  EXPECT_TRUE(fs::exists(folder / "run_summary.json"));
  EXPECT_EQ(gi::run_summary(run_), nlohmann::json::parse(gi::read_text_file(folder / "run_summary.json")));
  std::cout << "publishing " << largest.filename() << " (the largest published kernel) wrote " << bytes << " bytes\n";
  EXPECT_LE(bytes, 50'000u) << "publishing " << largest << " as a new kernel took " << bytes << " bytes";
}

}  // namespace
