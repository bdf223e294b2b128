// gi ablate without a GPU: the study's plan (named cells always, one factor
// at a time, malformed plans named), and a whole study on the stand-in
// evaluator of the evolve-all tests (stand_in_evolve_all.hpp): every run a
// normal run directory, a cell with nothing to search in a kernel marked
// not applicable, the interleaved final comparison recorded per run, and a
// study cut short and resumed ending as an uninterrupted one.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "gi/publish/comparison.hpp"
#include "gi/study/study_runner.hpp"
#include "grammar/edit_family.hpp"
#include "stand_in_evolve_all.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> cell_names(const StudyPlan& p) {
  std::vector<std::string> out;
  for (const auto& c : p.cells) out.push_back(c.name);
  return out;
}

const StudyCell& cell(const StudyPlan& p, const std::string& name) {
  for (const auto& c : p.cells)
    if (c.name == name) return c;
  throw std::runtime_error("no cell " + name);
}

TEST(StudyPlan, TheNamedCellsAreAlwaysThereAndFactorsVaryOneAtATime) {
  const StudyPlan p = parse_study(R"({
    "kernels": ["seeds/tools/sum_reduction", "seeds/tools/intensity_minmax"], "repeats": 3,
    "budget": {"population": 12, "generations": 2},
    "vary": {"leave_out": ["delete", "coarsen"], "alone": ["line"], "algorithms": ["random"],
             "budgets": [{"name": "double", "generations": 4}]},
    "cells": [{"name": "mine", "families": "line,coarsen", "launch_tuning": false},
              {"name": "mine_unswept", "families": "line,coarsen", "parameter_sweep": false}]})",
                                  "study.json");
  EXPECT_EQ(cell_names(p), (std::vector<std::string>{"everything", "line_and_cuda_edits", "switches_only",
                                                     "launch_tuning_only", "without_delete", "without_coarsen",
                                                     "only_line", "search_random", "budget_double", "mine",
                                                     "mine_unswept"}));
  EXPECT_EQ(cell(p, "line_and_cuda_edits").families, "line,cuda");
  EXPECT_FALSE(cell(p, "line_and_cuda_edits").launch_tuning);
  EXPECT_EQ(cell(p, "switches_only").families, "define");
  EXPECT_FALSE(cell(p, "launch_tuning_only").search);
  EXPECT_TRUE(cell(p, "launch_tuning_only").launch_tuning);
  // One factor at a time: each varied cell is "everything" but for its factor.
  EXPECT_EQ(cell(p, "without_delete").families, "all,-delete");
  EXPECT_TRUE(cell(p, "without_delete").launch_tuning);
  EXPECT_EQ(cell(p, "search_random").algorithm, "random");
  EXPECT_EQ(cell(p, "search_random").families, "all");
  EXPECT_EQ(cell(p, "budget_double").generations, 4);
  EXPECT_FALSE(cell(p, "mine").launch_tuning);
  EXPECT_TRUE(cell(p, "mine").parameter_sweep);
  EXPECT_FALSE(cell(p, "mine_unswept").parameter_sweep);
  EXPECT_TRUE(cell(p, "mine_unswept").launch_tuning);
  EXPECT_FALSE(StudyCell::from_json(cell(p, "mine_unswept").to_json()).parameter_sweep);
  EXPECT_EQ(p.baseline, "everything");

  const std::vector<StudyRun> runs = expand_runs(p);
  ASSERT_EQ(runs.size(), 3u * 2u * 11u);
  // Repeat-major: a study cut short still has every cell of its first seeds.
  EXPECT_EQ(runs[0].seed, 1u);
  EXPECT_EQ(runs[21].seed, 1u);
  EXPECT_EQ(runs[22].seed, 2u);
  EXPECT_EQ(runs[0].run_dir, "runs/tools-sum_reduction/everything/seed-1");
  EXPECT_EQ(runs[12].run_dir, "runs/tools-intensity_minmax/line_and_cuda_edits/seed-1");
  std::set<std::string> dirs;
  for (const auto& r : runs) dirs.insert(r.run_dir);
  EXPECT_EQ(dirs.size(), runs.size());
}

TEST(StudyPlan, CellKernelsSetAPlainSeedAgainstItsLibrarySeed) {
  // transform_only and the line edits on the plain seed, switches_only on
  // the library's: both have the slug tools-sum_reduction, never in one cell.
  const StudyPlan p = parse_study(R"({
    "kernels": ["runs/plain/tools/sum_reduction", "seeds/tools/sum_reduction"], "repeats": 2,
    "cells": [{"name": "transform_only", "families": "transform,structural", "launch_tuning": false}],
    "cell_kernels": {"switches_only": ["seeds/tools/sum_reduction"],
                     "everything": ["runs/plain/tools/sum_reduction"],
                     "line_and_cuda_edits": ["runs/plain/tools/sum_reduction"],
                     "launch_tuning_only": ["runs/plain/tools/sum_reduction"],
                     "transform_only": ["runs/plain/tools/sum_reduction"]}})",
                                  "study.json");
  EXPECT_TRUE(p.runs("switches_only", "seeds/tools/sum_reduction"));
  EXPECT_FALSE(p.runs("switches_only", "runs/plain/tools/sum_reduction"));
  const std::vector<StudyRun> runs = expand_runs(p);
  ASSERT_EQ(runs.size(), 2u * 5u);
  std::set<std::string> dirs;
  for (const auto& r : runs) {
    dirs.insert(r.run_dir);
    EXPECT_EQ(r.cell == "switches_only", r.kernel == "seeds/tools/sum_reduction") << r.run_dir;
  }
  EXPECT_EQ(dirs.size(), runs.size());
  EXPECT_TRUE(dirs.count("runs/tools-sum_reduction/switches_only/seed-2"));
  // The plan survives study.json, and an older study.json (no field) runs
  // every cell on every kernel.
  EXPECT_EQ(StudyPlan::from_json(p.to_json()).cell_kernels, p.cell_kernels);
  nlohmann::json old = p.to_json();
  old.erase("cell_kernels");
  EXPECT_TRUE(StudyPlan::from_json(old).runs("switches_only", "runs/plain/tools/sum_reduction"));
}

TEST(StudyPlan, AMalformedStudyIsNamed) {
  for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
           {R"({"repeats": 2})", "kernels: missing"},
           {R"({"kernels": []})", "kernels: expected at least one"},
           {R"({"kernels": ["k"], "repeats": 0})", "repeats: expected a whole number of at least 1"},
           {R"({"kernels": ["k"], "seeds": 5})", "seeds: unknown field"},
           {R"({"kernels": ["k"], "cell_kernels": {"mine": ["k"]}})", "cell_kernels.mine: 'mine' is no cell"},
           {R"({"kernels": ["k"], "cell_kernels": {"everything": ["j"]}})", "'j' is not in the study's kernels"},
           {R"({"kernels": ["a/t/k", "b/t/k"]})", "whose runs share the folder name t-k"},
           {R"({"kernels": ["k"], "vary": {"leave_out": ["nosuch"]}})", "vary.leave_out: unknown edit family 'nosuch'"},
           {R"({"kernels": ["k"], "vary": {"algorithms": ["annealing"]}})", "vary.algorithms: 'annealing': expected gp"},
           {R"({"kernels": ["k"], "cells": [{"name": "everything"}]})", "the cell name 'everything' is used twice"},
           {R"({"kernels": ["k"], "baseline": "nosuch"})", "baseline: 'nosuch' is no cell"},
           {R"({"kernels": ["k"], "cells": [{"name": "x", "search": "no"}]})", "cells[0].search: expected true or false"},
           {R"({"kernels": ["k"], "cells": [{"name": "x", "parameter_sweep": 1}]})",
            "cells[0].parameter_sweep: expected true or false"},
           {R"({"kernels": ["k"], "cells": [{"name": "x", "families": "delete,-delete"}]})", "leaves no family"},
           {"{\"kernels\": [", "malformed JSON"}}) {
    try {
      parse_study(text, "STUDY.json");
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("STUDY.json: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

TEST(StudyPlan, AFamilyListCanLeaveFamiliesOut) {
  const auto all = grammar::parse_family_list("all");
  const auto without = grammar::parse_family_list("all,-delete,-switch");
  EXPECT_EQ(without.size(), all.size() - 2);
  EXPECT_EQ(std::count(without.begin(), without.end(), "delete"), 0);
  EXPECT_EQ(std::count(without.begin(), without.end(), "define"), 0);
  EXPECT_EQ(std::count(without.begin(), without.end(), "insert"), 1);
}

// The stand-in study's final comparison: the modelled times of the seed at
// its default launch and of the final kernel at its tuning.
nlohmann::json modelled_comparison(const grammar::Patch& patch, const Tuning& seed_tuning, const Tuning& tuning) {
  ComparisonResult c;
  c.seed_tuning = seed_tuning;
  c.evolved_tuning = tuning;
  c.patch = grammar::to_string(patch);
  c.seed.median_ms = test::modelled_evaluation(grammar::Patch{}, 1, seed_tuning).median_ms;
  c.evolved.median_ms = test::modelled_evaluation(patch, 1, tuning).median_ms;
  c.speedup = c.seed.median_ms / c.evolved.median_ms;
  c.speedup_ci_low = c.speedup * 0.99;
  return c.to_json();
}

struct Study : ::testing::Test {
  fs::path root = fs::temp_directory_path() / ("gi-study-" + std::to_string(::getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  test::Interrupter interrupter;
  void SetUp() override {
    fs::remove_all(root);
    fs::create_directories(root);
    const fs::path seeds = test::source_dir() / "seeds";
    // A user's kernel without switches (the README's example), beside a library seed with them.
    const fs::path box = root / "user" / "box_filter";
    fs::create_directories(box);
    fs::copy_file(test::source_dir() / "examples/box_filter/box_filter_rows.cu", box / "kernel.cu");
    fs::copy_file(test::source_dir() / "examples/box_filter/filled_spec.json", box / "spec.json");
    std::ofstream(root / "STUDY.json") << nlohmann::json{
        {"kernels", {(seeds / "tools/sum_reduction").string(), box.string()}},
        {"repeats", 2},
        {"budget", {{"population", 8}, {"generations", 3}}},
        {"vary", {{"algorithms", {"random"}}}}}.dump();
  }
  void TearDown() override { fs::remove_all(root); }

  AblateOptions options(const std::string& out) const {
    AblateOptions o;
    o.study_file = root / "STUDY.json";
    o.out_dir = root / out;
    o.run.cache_dir = root / "cache";
    o.run.quiet = true;
    o.say = [](const std::string&) {};
    return o;
  }
  StudyBackend backend() {
    StudyBackend b;
    b.run_backend = [this](const EvolveOptions& run) {
      RunBackend r = test::stand_in_backend(run, interrupter, "", "");
      // Publication as post_evolve leaves it: comparison.json names the published patch and tuning.
      r.finish = [this](RunDirectory& dir, const Seed&, const fitness::KernelSpec& spec,
                        const std::function<void(const std::string&)>&) {
        interrupter.tick();
        const grammar::Patch patch = grammar::parse_patch(read_text_file(dir.path() / "minimised.gi"));
        const Tuning tuning = tuning_from_json(dir.read_json("tuning_best.json")->at("best"));
        dir.write_text("comparison.json",
                       modelled_comparison(patch, tuning_from_json(dir.read_json("tuning_seed.json")->at("best")), tuning)
                               .dump(2) + "\n");
        (void)spec;
        return true;
      };
      return r;
    };
    b.compare = [](const Seed&, const fitness::KernelSpec&, const grammar::Patch& patch, const Tuning& seed_tuning,
                   const Tuning& tuning, const EvolveOptions&) { return modelled_comparison(patch, seed_tuning, tuning); };
    return b;
  }
};

// What a study's results say, without the wall-clock seconds.
nlohmann::json comparable(const nlohmann::json& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (auto row : results.at("runs")) {
    row.erase("seconds_to_first_improvement");
    row.erase("search_seconds");
    rows.push_back(row);
  }
  return rows;
}

TEST_F(Study, RunsEveryCellAndResumesToTheSameResults) {
  const StudySummary whole = run_study(options("whole"), backend());
  EXPECT_TRUE(whole.finished());
  // The box filter has no switches: switches_only is not applicable there, twice (two seeds).
  EXPECT_EQ(whole.not_applicable, 2);
  EXPECT_EQ(whole.failed, 0);
  EXPECT_EQ(whole.complete, 2 * 2 * 5 - 2);
  const nlohmann::json results = nlohmann::json::parse(read_text_file(root / "whole" / "study_results.json"));
  int rows = 0, swept = 0;
  for (const auto& row : results.at("runs")) {
    ++rows;
    const fs::path dir = root / "whole" / row.at("run_dir").get<std::string>();
    if (row.at("status") == "not_applicable") {
      EXPECT_EQ(row.at("cell"), "switches_only");
      EXPECT_EQ(row.at("kernel"), "user-box_filter");
      EXPECT_FALSE(fs::exists(dir));
      continue;
    }
    ASSERT_EQ(row.at("status"), "complete") << row.dump();
    EXPECT_TRUE(fs::exists(dir / "config.json")) << "every run is a normal run directory";
    EXPECT_TRUE(fs::exists(dir / "ablation_comparison.json"));
    EXPECT_GT(row.at("speedup").get<double>(), 0.0);
    const nlohmann::json tuning = nlohmann::json::parse(read_text_file(dir / "tuning_seed.json"));
    if (row.at("cell") == "launch_tuning_only") {
      EXPECT_FALSE(fs::exists(dir / "generations.jsonl")) << "no search";
      EXPECT_EQ(row.at("variants"), 0);
      EXPECT_TRUE(row.at("evaluations_to_first_improvement").is_null());
      EXPECT_GT(tuning.at("trials").size(), 1u) << "the launch is tuned";
    } else {
      EXPECT_GT(row.at("variants").get<int>(), 0);
      EXPECT_GE(row.at("valid_fraction").get<double>(), 0.0);
      EXPECT_LE(row.at("valid_fraction").get<double>(), 1.0);
    }
    if (row.at("cell") == "line_and_cuda_edits" || row.at("cell") == "switches_only") {
      EXPECT_EQ(tuning.at("trials").size(), 1u) << "no launch tuning: the spec's default block alone";
    }
    const nlohmann::json config = nlohmann::json::parse(read_text_file(dir / "config.json"));
    EXPECT_EQ(config.at("search").at("seed"), row.at("seed"));
    EXPECT_TRUE(config.at("parameter_sweep").get<bool>());
    if (fs::exists(dir / "swept.json")) {
      // The sweep's patch is the one retuned and minimised from.
      ++swept;
      const nlohmann::json sw = nlohmann::json::parse(read_text_file(dir / "swept.json"));
      EXPECT_EQ(grammar::to_string(grammar::parse_patch(read_text_file(dir / "best.gi"))), sw.at("patch"));
    }
    if (row.at("cell") == "search_random") {
      EXPECT_EQ(config.at("search").at("algorithm"), "random");
    }
  }
  EXPECT_EQ(rows, 2 * 2 * 5);
  EXPECT_GT(swept, 0) << "no run's winner had an edit with a parameter to sweep";

  // Cut short every few evaluations, called again until done: the same results.
  AblateOptions cut = options("cut");
  int calls = 0;
  for (long every = 37;; every += 11) {
    ASSERT_LT(++calls, 200) << "the study did not finish";
    interrupter.left = every;
    try {
      if (run_study(cut, backend()).finished()) break;
    } catch (const test::Interrupted&) {
    }
  }
  EXPECT_GT(calls, 2);
  interrupter.left = -1;
  const nlohmann::json again = nlohmann::json::parse(read_text_file(root / "cut" / "study_results.json"));
  EXPECT_EQ(comparable(again), comparable(results));

  // A cell made again after a fix: its runs start afresh, the old folders kept aside.
  AblateOptions redo = options("whole");
  redo.redo_cells = {"launch_tuning_only"};
  const StudySummary redone = run_study(redo, backend());
  EXPECT_TRUE(redone.finished());
  EXPECT_EQ(redone.complete, whole.complete);
  EXPECT_TRUE(fs::exists(root / "whole/runs/tools-sum_reduction/launch_tuning_only/seed-1.superseded-1/config.json"));
  EXPECT_TRUE(fs::exists(root / "whole/runs/tools-sum_reduction/launch_tuning_only/seed-1/ablation_comparison.json"));

  // More repeats extend the study: only the new seed's runs are made.
  nlohmann::json grown = nlohmann::json::parse(read_text_file(root / "STUDY.json"));
  grown["repeats"] = 3;
  std::ofstream(root / "STUDY.json") << grown.dump();
  const StudySummary three = run_study(options("whole"), backend());
  EXPECT_TRUE(three.finished());
  EXPECT_EQ(three.complete, whole.complete * 3 / 2);
  EXPECT_TRUE(fs::exists(root / "whole/runs/tools-sum_reduction/everything/seed-3/ablation_comparison.json"));
  EXPECT_TRUE(fs::exists(root / "whole/runs/tools-sum_reduction/launch_tuning_only/seed-1.superseded-1"))
      << "the earlier runs are kept as they were";

  // A study keeps its plan.
  std::ofstream(root / "STUDY.json") << R"({"kernels": ["seeds/tools/sum_reduction"], "repeats": 9})";
  try {
    run_study(options("whole"), backend());
    ADD_FAILURE() << "a changed plan was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("differs from the plan"), std::string::npos) << e.what();
  }
}

// Runs sharded over processes that share the study folder (mpirun ranks,
// Slurm tasks; here two shards one after the other): each takes runs i mod 2,
// and the folder ends with the results one process would have written.
TEST_F(Study, ShardsShareOneFolderAndGatherOneResult) {
  run_study(options("one"), backend());
  for (int index = 0; index < 2; ++index) {
    AblateOptions shard = options("sharded");
    shard.shard = Shard{index, 2, "test"};
    const StudySummary s = run_study(shard, backend());
    EXPECT_EQ(s.finished(), index == 1) << "the first shard leaves the second's runs";
  }
  const nlohmann::json one = nlohmann::json::parse(read_text_file(root / "one" / "study_results.json"));
  const nlohmann::json sharded = nlohmann::json::parse(read_text_file(root / "sharded" / "study_results.json"));
  EXPECT_EQ(comparable(sharded), comparable(one));
}

}  // namespace
}  // namespace gi
