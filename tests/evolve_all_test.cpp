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

#include "fitness/atomic_file.hpp"
#include "gi/evolve_all.hpp"
#include "modelled_evaluation.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;

// Thrown by the stand-in to cut a call short, as a kill would: it is not a
// std::runtime_error, so evolve-all does not take it for a kernel's failure.
struct Interrupted {};

// Counts down to an interruption over every evaluation of the call; < 0: never.
struct Interrupter {
  long left = -1;
  void tick() {
    if (left < 0) return;
    if (left-- == 0) throw Interrupted{};
  }
};

// The shared timing model (modelled_evaluation.hpp), counting down to an
// interruption; a `broken` kernel fails everything, the seed included.
class StandInEvaluator : public StageEvaluator {
 public:
  StandInEvaluator(Interrupter& interrupter, bool broken) : interrupter_(interrupter), broken_(broken) {}
  void begin_generation(int, std::uint64_t data_seed) override { data_seed_ = data_seed; }
  void use_workload(const std::string&, std::uint64_t data_seed) override { data_seed_ = data_seed; }
  void set_tuning(const Tuning& t) override { tuning_ = t; }
  void set_seed_time(double) override {}
  EvaluatorStats stats() const override { return stats_; }
  std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) override {
    std::vector<Evaluation> out;
    for (const auto& p : patches) {
      interrupter_.tick();
      Evaluation e = test::modelled_evaluation(p, data_seed_, tuning_);
      if (broken_) {
        e.status = EvalStatus::WrongOutput;
        e.median_ms = std::numeric_limits<double>::infinity();
      }
      out.push_back(e);
      ++stats_.evaluations;
    }
    return out;
  }

 private:
  Interrupter& interrupter_;
  bool broken_;
  Tuning tuning_;
  std::uint64_t data_seed_ = 0;
  EvaluatorStats stats_;
};

// Publication as the GPU backend's last stage would do it, from the run's
// own files: the minimised patch and its tuning, or a rejection.
bool stand_in_finish(RunDirectory& run, const EvolveOptions& o, const std::string& rejected, Interrupter& interrupter) {
  interrupter.tick();
  const std::string kernel = run.path().filename().string();
  if (kernel == rejected) return false;
  const fs::path folder = o.evolved_root / "stand-in-gpu" / kernel;
  fs::create_directories(folder);
  nlohmann::json result = {{"kernel", kernel},
                           {"patch", read_text_file(run.path() / "minimised.gi")},
                           {"minimised", *run.read_json("minimised.json")},
                           {"tuning", run.read_json("tuning_best.json")->at("best")}};
  fitness::write_file_atomically(folder / "result.json", result.dump(2) + "\n");
  return true;
}

struct EvolveAll : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gi_evolve_all_test_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { fs::remove_all(dir); }
  void TearDown() override { fs::remove_all(dir); }

  static constexpr const char* kBroken = "tools-max_vector_length";
  static constexpr const char* kRejected = "tools-intensity_minmax";

  EvolveAllOptions options(const fs::path& root) {
    EvolveAllOptions o;
    o.seeds_root = test::source_dir() / "seeds";
    o.kernels = "tools/sum_reduction,tools/max_vector_length,similarity/ssd_gradient,tools/intensity_minmax";
    o.budget_per_kernel_minutes = 600;
    o.out_dir = root / "out";
    o.run.evolved_root = root / "evolved";
    o.run.cache_dir = root / "cache";
    o.run.search.population = 10;
    o.run.search.generations = 4;
    o.run.search.seed = 11;
    o.run.search.data_every = 2;
    o.say = [](const std::string&) {};
    o.run.quiet = true;
    o.gpu_slug = "stand-in-gpu";
    return o;
  }
  // One call of evolve-all that is interrupted after `evaluations_before_stop` evaluations (< 0: never).
  EvolveAllSummary call(const EvolveAllOptions& o, long evaluations_before_stop, bool* interrupted = nullptr) {
    Interrupter interrupter{evaluations_before_stop};
    auto backend_for = [&](const EvolveOptions& run) {
      RunBackend b;
      const std::string kernel = run.run_dir.filename().string();
      b.make_evaluator = [&interrupter, kernel](const Seed&, const fitness::KernelSpec&, const nlohmann::json&) {
        return std::unique_ptr<StageEvaluator>(std::make_unique<StandInEvaluator>(interrupter, kernel == kBroken));
      };
      b.finish = [&interrupter, run](RunDirectory& r, const Seed&, const fitness::KernelSpec&,
                                     const std::function<void(const std::string&)>&) {
        return stand_in_finish(r, run, kRejected, interrupter);
      };
      return b;
    };
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

// Every file of a folder tree, by relative path; the fields that are wall
// times (and the files that hold only times or the date) are left out, as
// they differ between any two runs.
std::map<std::string, std::string> results_of(const fs::path& root) {
  static const std::set<std::string> times_only = {"stage_seconds.json", "evaluator_stats.json", "versions.json",
                                                   "search_data.json"};
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (times_only.count(name)) continue;
    std::string text = read_text_file(e.path());
    auto drop = [](nlohmann::json j) {
      for (const char* k : {"elapsed_seconds", "eta_seconds", "evaluations_per_second", "search_seconds"}) j.erase(k);
      if (j.contains("state")) j["state"].erase("search_seconds");
      return j.dump();
    };
    if (name == "generations.jsonl") {
      std::istringstream in(text);
      text.clear();
      for (std::string line; std::getline(in, line);) text += drop(nlohmann::json::parse(line)) + "\n";
    } else if (name == "checkpoint.json") {
      text = drop(nlohmann::json::parse(text));
    }
    // The two runs live in different folders, which the plan names.
    for (std::size_t at; (at = text.find(root.string())) != std::string::npos;) text.replace(at, root.string().size(), "<root>");
    out[e.path().lexically_relative(root).generic_string()] = text;
  }
  return out;
}

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

  const auto a = results_of(dir / "whole");
  const auto b = results_of(dir / "split");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [file, text] : a) {
    ASSERT_TRUE(b.count(file)) << file;
    EXPECT_EQ(text, b.at(file)) << file << " differs between the uninterrupted and the resumed run";
  }
  EXPECT_TRUE(a.count("evolved/stand-in-gpu/tools-sum_reduction/result.json"));
  EXPECT_FALSE(a.count("evolved/stand-in-gpu/tools-intensity_minmax/result.json"));
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
