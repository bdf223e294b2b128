// The search engine without a GPU: a deterministic fake evaluator stands in
// for fitness, so GP mechanics, logging, checkpoints and resume are testable.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <fstream>
#include <random>

#include "gi/run/winner_retune.hpp"
#include "gi/search/minimise.hpp"
#include "gi/run/search_driver.hpp"
#include "gi/search/switch_baseline.hpp"
#include "gi/seed/switch_settings.hpp"
#include "gi/search/tuning.hpp"
#include "grammar/source_hash.hpp"
#include "modelled_evaluation.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

// Measures every patch with the shared model (modelled_evaluation.hpp) and
// records which generations and data sets it was asked for.
class FakeEvaluator : public Evaluator {
 public:
  void begin_generation(int generation, std::uint64_t data_seed) override {
    generations.push_back(generation);
    data_seeds.push_back(data_seed);
    data_seed_ = data_seed;
  }
  void prefetch_generation(int generation, std::uint64_t data_seed) override {
    prefetched.emplace_back(generation, data_seed);
  }
  void set_tuning(const Tuning& t) override { tuning = t; }
  std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) override {
    std::vector<Evaluation> out;
    for (const auto& p : patches) {
      out.push_back(test::modelled_evaluation(p, data_seed_, tuning));
      ++evaluations;
    }
    return out;
  }
  std::vector<int> generations;
  std::vector<std::uint64_t> data_seeds;
  std::vector<std::pair<int, std::uint64_t>> prefetched;
  int evaluations = 0;
  Tuning tuning;

 private:
  std::uint64_t data_seed_ = 0;
};

struct SearchRun : ::testing::Test {
  Seed seed = load_seed(test::seed_dirs()[0]);
  EditOperators ops{seed.grammar, OperatorConfig{}};
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("gi_search_test_" + std::to_string(::getpid()) + "_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::remove_all(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  SearchConfig config(const std::string& algorithm = "gp") {
    SearchConfig c;
    c.algorithm = algorithm;
    c.population = 40;
    c.generations = 8;
    c.seed = 5;
    return c;
  }
  std::vector<std::string> lines(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
};

TEST_F(SearchRun, GpImprovesOnTheSeedAndLogsEveryEvaluation) {
  FakeEvaluator fake;
  auto run = RunDirectory::create(dir / "a", {{"search", to_json(config())}}, {{"gi", "test"}});
  const SearchState s = run_search(config(), ops, fake, run, SearchState{});
  EXPECT_EQ(s.next_generation, 8);
  ASSERT_TRUE(s.best);
  EXPECT_FALSE(s.best->patch.edits.empty());
  EXPECT_LT(s.best->eval.median_ms, 0.9);  // several 0.85-0.9 edits combine
  EXPECT_EQ(fake.evaluations, 8 * 41);     // 40 proposals and the seed per generation
  EXPECT_EQ(lines(dir / "a/evaluations.jsonl").size(), 8u * 41u);
  EXPECT_EQ(lines(dir / "a/generations.jsonl").size(), 8u);
  const auto last = nlohmann::json::parse(lines(dir / "a/generations.jsonl").back());
  EXPECT_GT(last["speedup"].get<double>(), 1.1);
  EXPECT_TRUE(last.contains("valid_fraction"));
  EXPECT_TRUE(last.contains("evaluations_per_second"));
}

// On a seed with switches the first generation holds every allowed switch
// setting (the hand-written paths) next to random single edits, so the
// search builds on the paths from the start.
TEST_F(SearchRun, GpStartsFromEverySwitchSettingOfTheSeed) {
  OperatorConfig with_switches;
  with_switches.context = seed.context;
  const EditOperators switched(seed.grammar, with_switches);
  const auto settings = switch_settings(seed);
  ASSERT_GE(settings.size(), 3u);
  SearchConfig c = config();
  c.population = 40;
  std::mt19937_64 rng(1);
  const std::vector<grammar::Patch> first = make_search(c, switched)->propose(SearchState{}, rng);
  ASSERT_EQ(first.size(), 40u);
  for (std::size_t i = 1; i < settings.size(); ++i)
    EXPECT_NE(std::find(first.begin(), first.end(), settings[i].patch), first.end()) << settings[i].name;
  // Without the define family (an ablation) none is put in.
  OperatorConfig no_define = with_switches;
  no_define.enabled = parse_families("line");
  const EditOperators lines_only(seed.grammar, no_define);
  std::mt19937_64 rng2(1);
  for (const grammar::Patch& p : make_search(c, lines_only)->propose(SearchState{}, rng2))
    for (const grammar::Edit& e : p.edits) EXPECT_NE(e.family, "define");
}

// A state as JSON without its wall time (search_seconds), which differs between any two runs.
nlohmann::json without_times(const SearchState& s) {
  nlohmann::json j = to_json(s);
  j.erase("search_seconds");
  return j;
}

TEST_F(SearchRun, SameSeedSameMeasurementsSameRun) {
  FakeEvaluator f1, f2;
  auto r1 = RunDirectory::create(dir / "a", {}, {});
  auto r2 = RunDirectory::create(dir / "b", {}, {});
  const auto s1 = run_search(config(), ops, f1, r1, SearchState{});
  const auto s2 = run_search(config(), ops, f2, r2, SearchState{});
  EXPECT_EQ(without_times(s1), without_times(s2));
}

TEST_F(SearchRun, KilledRunResumesLosingAtMostTheGenerationInFlight) {
  FakeEvaluator whole;
  auto r1 = RunDirectory::create(dir / "whole", {}, {});
  const auto uninterrupted = run_search(config(), ops, whole, r1, SearchState{});

  FakeEvaluator first;
  auto r2 = RunDirectory::create(dir / "killed", {}, {});
  DriverOptions stop_early;
  stop_early.max_generations_this_call = 3;
  run_search(config(), ops, first, r2, SearchState{}, stop_early);
  // The kill came during generation 3: half-written log lines of it exist.
  {
    std::ofstream ev(dir / "killed/evaluations.jsonl", std::ios::app);
    ev << R"({"generation":3,"index":0,"patch":"<_kernel.cu_1>","status":"ok"})" << "\n" << R"({"generation":3,"ind)";
  }
  auto reopened = RunDirectory::open(dir / "killed");
  SearchState state = resume_state(reopened);
  EXPECT_EQ(state.next_generation, 3);
  FakeEvaluator second;
  const auto resumed = run_search(config(), ops, second, reopened, state);
  EXPECT_EQ(second.generations.front(), 3);
  EXPECT_EQ(without_times(resumed), without_times(uninterrupted));
  // The logs equal the uninterrupted run's, line for line, but for timing fields.
  auto strip = [](std::vector<std::string> ls) {
    for (auto& l : ls) {
      auto j = nlohmann::json::parse(l);
      for (const char* k : {"elapsed_seconds", "eta_seconds", "evaluations_per_second", "search_seconds"}) j.erase(k);
      l = j.dump();
    }
    return ls;
  };
  EXPECT_EQ(lines(dir / "killed/evaluations.jsonl"), lines(dir / "whole/evaluations.jsonl"));
  EXPECT_EQ(strip(lines(dir / "killed/generations.jsonl")), strip(lines(dir / "whole/generations.jsonl")));
}

TEST_F(SearchRun, GenerationsShareDataInRunsOfDataEveryAndTheNextSetIsMadeAhead) {
  SearchConfig c = config();
  c.generations = 7;
  c.data_every = 3;
  FakeEvaluator f;
  auto run = RunDirectory::create(dir / "shared", {}, {});
  run_search(c, ops, f, run, SearchState{});
  ASSERT_EQ(f.data_seeds.size(), 7u);
  for (int g = 0; g < 7; ++g) EXPECT_EQ(f.data_seeds[g], generation_data_seed(c.seed, g / 3)) << g;
  EXPECT_NE(f.data_seeds[0], f.data_seeds[3]);
  EXPECT_NE(f.data_seeds[3], f.data_seeds[6]);
  // Each set is asked for at the start of the set before it, three generations ahead.
  const std::vector<std::pair<int, std::uint64_t>> expected = {{3, f.data_seeds[3]}, {6, f.data_seeds[6]}};
  EXPECT_EQ(f.prefetched, expected);
  // data_every 1 is the old behaviour: fresh data every generation.
  EXPECT_EQ(training_data_seed(config(), 4), generation_data_seed(config().seed, 4));
}

TEST_F(SearchRun, TheBudgetIsSummedOverCallsAndEndsTheSearchAtAGenerationEnd) {
  SearchConfig c = config();
  c.budget_seconds = 1e-12;
  FakeEvaluator f;
  auto run = RunDirectory::create(dir / "budget", {}, {});
  const SearchState after = run_search(c, ops, f, run, SearchState{});
  EXPECT_EQ(after.next_generation, 1);
  EXPECT_GT(after.search_seconds, 0);
  EXPECT_TRUE(search_finished(c, after));
  SearchState resumed = after;
  resumed.search_seconds = 0;  // a state whose budget is not spent goes on
  EXPECT_FALSE(search_finished(c, resumed));
}

TEST_F(SearchRun, CorruptCheckpointIsAClearError) {
  auto run = RunDirectory::create(dir / "c", {}, {});
  run.write_text("checkpoint.json", "{\"format\": \"gi-checkpoint-1\", \"state\": {");
  EXPECT_THROW(
      {
        try {
          resume_state(run);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("checkpoint.json"), std::string::npos);
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(RunDirectory::create(dir / "c", {}, {}), std::runtime_error);  // never overwrites a run
}

TEST_F(SearchRun, RandomAndLocalSearchRunAndLocalMovesByFirstImprovement) {
  for (const std::string algorithm : {"random", "local"}) {
    FakeEvaluator fake;
    auto run = RunDirectory::create(dir / algorithm, {}, {});
    const auto s = run_search(config(algorithm), ops, fake, run, SearchState{});
    ASSERT_TRUE(s.best) << algorithm;
    EXPECT_LT(s.best->eval.median_ms, 1.0) << algorithm;
  }
}

TEST_F(SearchRun, FailingSeedStopsTheRunWithItsCheckpointIntact) {
  struct Broken : FakeEvaluator {
    std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& p) override {
      auto out = FakeEvaluator::evaluate(p);
      if (generations.back() == 2) out[0].status = EvalStatus::Timeout;
      return out;
    }
  } broken;
  auto run = RunDirectory::create(dir / "s", {}, {});
  EXPECT_THROW(run_search(config(), ops, broken, run, SearchState{}), std::runtime_error);
  EXPECT_EQ(resume_state(run).next_generation, 2);
}

TEST_F(SearchRun, TuningPicksTheFastestValidCombination) {
  FakeEvaluator fake;
  TuningSpace space;
  space.option_sets = {{}, {"--use_fast_math"}};
  const TuningResult r = tune(fake, grammar::Patch{}, space);
  EXPECT_EQ(r.best.block_size, 128u);
  EXPECT_EQ(r.trials.size(), 10u);
  EXPECT_EQ(fake.tuning, r.best);  // the evaluator is left on the winner
}

// Every switch setting measured at every block size (the seed's options),
// the fastest retuned: the baseline that says what GI added beyond choosing
// a path.
TEST_F(SearchRun, SwitchBaselineMeasuresEverySettingAtEveryBlockSizeAndRetunesTheBest) {
  FakeEvaluator fake;
  TuningSpace space;
  space.block_sizes = {64, 128};
  const SwitchBaseline b = measure_switch_baseline(fake, seed, Tuning{64, {}}, space);
  const auto settings = switch_settings(seed);
  ASSERT_EQ(b.trials.size(), settings.size());
  ASSERT_GE(b.trials.size(), 3u);  // BSPLINE_PATH 0 (the seed's own), 1, 2, ...
  EXPECT_EQ(b.trials[0].setting, "");
  EXPECT_EQ(b.trials[1].setting, "BSPLINE_PATH=1");
  const SwitchBaseline::Trial* fastest = nullptr;
  for (const SwitchBaseline::Trial& t : b.trials) {
    ASSERT_EQ(t.block_trials.size(), 2u) << t.setting;
    // Each setting keeps its own best block size.
    const TuningTrial* own = nullptr;
    for (const TuningTrial& bt : t.block_trials)
      if (bt.eval.valid() && (!own || bt.eval.median_ms < own->eval.median_ms)) own = &bt;
    if (!own) continue;
    EXPECT_EQ(t.tuning, own->tuning) << t.setting;
    EXPECT_EQ(t.eval.median_ms, own->eval.median_ms) << t.setting;
    if (!fastest || t.eval.median_ms < fastest->eval.median_ms) fastest = &t;
  }
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(b.best_setting, fastest->setting);
  EXPECT_EQ(b.best_patch, fastest->patch);
  EXPECT_EQ(b.best_tuning.block_size, 128u);  // the fake's favourite
  EXPECT_EQ(fake.tuning, (Tuning{64, {}}));  // left on the seed's tuning for the search
  const SwitchBaseline back = SwitchBaseline::from_json(b.to_json());
  EXPECT_EQ(back.best_patch, b.best_patch);
  EXPECT_EQ(back.best_tuning, b.best_tuning);
  EXPECT_EQ(b.to_json().at("trials").at(1).at("block_trials").size(), 2u);
  EXPECT_THROW(SwitchBaseline::from_json(nlohmann::json::object()), std::runtime_error);
}

// The winner gives way to the best switch setting only when that setting is
// faster beyond the noise margin.
TEST(SwitchBaselineBeats, OnlyBeyondTheNoiseMargin) {
  SwitchBaseline b;
  b.best_median_ms = 1.0;
  EXPECT_TRUE(switch_baseline_beats(b, 1.02, 0.01));
  EXPECT_FALSE(switch_baseline_beats(b, 1.005, 0.01));
  EXPECT_FALSE(switch_baseline_beats(b, 0.9, 0.01));
  b.best_median_ms = 0;  // never measured
  EXPECT_FALSE(switch_baseline_beats(b, 5.0, 0.01));
}

TEST(WinnerCandidates, BestFirstThenTheValidFastestDistinct) {
  SearchState state;
  auto individual = [](const std::string& patch, double ms, bool valid) {
    Individual i;
    i.patch = grammar::parse_patch(patch);
    i.eval.status = valid ? EvalStatus::Ok : EvalStatus::WrongOutput;
    i.eval.median_ms = ms;
    return i;
  };
  state.best = individual("launch_bounds:256", 0.5, true);
  state.population = {individual("launch_bounds:128", 0.9, true), individual("launch_bounds:512", 0.1, false),
                      individual("launch_bounds:256", 0.5, true), individual("launch_bounds:64", 0.7, true)};
  const auto c = winner_candidates(state, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(grammar::to_string(c[0]), "launch_bounds:256");
  EXPECT_EQ(grammar::to_string(c[1]), "launch_bounds:64") << "the fastest valid other, invalid ones left out";
  EXPECT_EQ(grammar::to_string(c[2]), "launch_bounds:128");
  EXPECT_EQ(winner_candidates(SearchState{}, 3), std::vector<grammar::Patch>{grammar::Patch{}}) << "the seed at least";
}

// An evaluator whose verdicts are a table: a patch not in `ms` is wrong
// output at every tuning (it fitted the search's data only).
class TableEvaluator : public Evaluator {
 public:
  std::map<std::string, double> ms;
  void begin_generation(int, std::uint64_t) override {}
  void set_tuning(const Tuning&) override {}
  std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) override {
    std::vector<Evaluation> out;
    for (const auto& p : patches) {
      Evaluation e;
      e.compiled = true;
      const auto it = ms.find(grammar::to_string(p));
      e.status = it == ms.end() ? EvalStatus::WrongOutput : EvalStatus::Ok;
      e.median_ms = it == ms.end() ? std::numeric_limits<double>::infinity() : it->second;
      out.push_back(e);
    }
    return out;
  }
};

TEST(RetuneWinner, AWinnerInvalidOnTheTuningDataGivesWayToTheNextCandidate) {
  SearchState state;
  Individual best{grammar::parse_patch("launch_bounds:256"), {}};
  best.eval.status = EvalStatus::Ok;
  best.eval.median_ms = 0.5;
  Individual next{grammar::parse_patch("launch_bounds:128"), {}};
  next.eval.status = EvalStatus::Ok;
  next.eval.median_ms = 0.6;
  state.best = best;
  state.population = {best, next};
  TableEvaluator ev;
  ev.ms = {{"launch_bounds:128", 0.6}, {"", 1.0}};
  std::vector<std::string> said;
  const auto j = retune_winner(ev, state, TuningSpace{{64, 128}, {{}}}, std::nullopt,
                               [&](const std::string& s) { said.push_back(s); });
  EXPECT_EQ(j.at("winner_patch"), "launch_bounds:128");
  EXPECT_EQ(grammar::to_string(retuned_winner_patch(j, state)), "launch_bounds:128");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("candidate 1 is dropped"), std::string::npos) << said[0];

  ev.ms = {{"", 1.0}};  // every candidate overfitted: the seed wins
  const auto seed = retune_winner(ev, state, TuningSpace{{64}, {{}}}, std::nullopt, [](const std::string&) {});
  EXPECT_EQ(seed.at("winner_patch"), "");
}

TEST(RetuneWinner, ASlowerWinnerGivesWayToTheBestSwitchSetting) {
  SearchState state;
  state.best = Individual{grammar::parse_patch("launch_bounds:256"), {}};
  state.noise_margin = 0.01;
  TableEvaluator ev;
  ev.ms = {{"launch_bounds:256", 0.5}};
  SwitchBaseline b;
  b.best_patch = grammar::parse_patch("define:BSPLINE_PATH=2");
  b.best_tuning = {512, {}};
  b.best_median_ms = 0.3;
  const auto j = retune_winner(ev, state, TuningSpace{{128}, {{}}}, b, [](const std::string&) {});
  EXPECT_EQ(j.at("winner_patch"), "define:BSPLINE_PATH=2");
  EXPECT_EQ(j.at("best").at("block_size"), 512);
  EXPECT_EQ(j.at("search_winner").at("patch"), "launch_bounds:256");
  b.best_median_ms = 0.499;  // within the noise margin: the search's winner stays
  const auto kept = retune_winner(ev, state, TuningSpace{{128}, {{}}}, b, [](const std::string&) {});
  EXPECT_FALSE(kept.contains("winner_patch"));
  EXPECT_EQ(grammar::to_string(retuned_winner_patch(kept, state)), "launch_bounds:256");
}

TEST(SearchTuning, TheBestSwitchSettingsTuningWhenAPathBeatsTheSeed) {
  const Tuning seed{128, {}};
  SwitchBaseline b;
  b.best_tuning = {512, {"--use_fast_math"}};
  b.best_median_ms = 0.5;
  EXPECT_EQ(search_tuning(b, seed), seed) << "the seed's own setting is best: the seed's tuning";
  b.best_patch = grammar::parse_patch("define:BSPLINE_PATH=2");
  EXPECT_EQ(search_tuning(b, seed), b.best_tuning);
}

TEST_F(SearchRun, MinimisationDropsUselessEditsAndRanksContributions) {
  FakeEvaluator fake;
  // Find two edits that help (factor < 0.95) and one neutral-ish (> 1.0) but valid.
  std::mt19937_64 rng(3);
  grammar::Patch helpful, harmful;
  while (helpful.edits.size() < 2 || harmful.edits.empty()) {
    const grammar::Edit e = ops.random_edit(rng);
    const Evaluation ev = fake.evaluate({grammar::Patch{{e}}}).at(0);
    if (!ev.valid()) continue;
    if (ev.median_ms < 0.93 && helpful.edits.size() < 2) helpful.edits.push_back(e);
    if (ev.median_ms > 1.03 && harmful.edits.empty()) harmful.edits.push_back(e);
  }
  grammar::Patch p = helpful;
  p.edits.insert(p.edits.begin() + 1, harmful.edits[0]);
  const MinimisedPatch m = minimise(fake, p, 0.01);
  EXPECT_EQ(m.patch.edits.size(), 2u);
  ASSERT_EQ(m.dropped.size(), 1u);
  EXPECT_EQ(m.dropped[0], harmful.edits[0]);
  ASSERT_EQ(m.contributions.size(), 2u);
  EXPECT_GE(m.contributions[0].contribution, m.contributions[1].contribution);
  EXPECT_GT(m.contributions[1].contribution, 0.0);
  EXPECT_NEAR(m.contributions[1].cumulative_ms, m.eval.median_ms, 0.01);
}

TEST_F(SearchRun, DataThatMakesEverythingFasterIsNotAnImprovement) {
  // Every variant, the seed included, runs 20% faster on odd generations'
  // data (a smaller mask): the best must move only for variants that beat the
  // seed measured on the same data.
  struct Drifting : FakeEvaluator {
    std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& p) override {
      auto out = FakeEvaluator::evaluate(p);
      for (std::size_t i = 0; i < out.size(); ++i) {
        if (generations.back() % 2 == 1) out[i].median_ms *= 0.8;
        if (i > 0) out[i].median_ms = std::max(out[i].median_ms, out[0].median_ms);  // nothing beats the seed
      }
      return out;
    }
  } drifting;
  auto run = RunDirectory::create(dir / "drift", {}, {});
  const auto s = run_search(config(), ops, drifting, run, SearchState{});
  ASSERT_TRUE(s.best);
  EXPECT_TRUE(s.best->patch.edits.empty());  // still the seed
  EXPECT_DOUBLE_EQ(s.best_relative, 1.0);
}

TEST(Crossover, KeepsEditsFromBothParents) {
  grammar::Patch a = grammar::parse_patch("<_k.cu_1> <_k.cu_2> <_k.cu_3> <_k.cu_4>");
  grammar::Patch b = grammar::parse_patch("<_k.cu_11> <_k.cu_12> <_k.cu_13> <_k.cu_14>");
  std::mt19937_64 rng(1);
  bool mixed = false;
  for (int i = 0; i < 200; ++i) {
    const auto c = crossover(a, b, rng);
    bool from_a = false, from_b = false;
    for (const auto& e : c.edits) (e.target.find("_1") != std::string::npos && e.target.size() == 9 ? from_a : from_b) = true;
    mixed |= from_a && from_b;
    EXPECT_LE(c.edits.size(), 8u);
  }
  EXPECT_TRUE(mixed);
}

}  // namespace
}  // namespace gi
