#include "gi/evolution_run.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "gi/minimise.hpp"
#include "gi/mutant_survey.hpp"
#include "gi/patch_files.hpp"
#include "gi/post_evolution.hpp"
#include "gi/switch_baseline.hpp"
#include "gi/versions.hpp"
#include "gi/winner_retune.hpp"

namespace gi {
namespace fs = std::filesystem;

std::uint64_t tuning_data_seed(std::uint64_t run_seed) { return generation_data_seed(run_seed, -1); }

std::string progress_line(const nlohmann::json& g, int generations) {
  char buf[256];
  const double eta = g.value("eta_seconds", 0.0);
  std::snprintf(buf, sizeof buf,
                "gen %3d/%d  best %.3fx seed (this gen: %.4f)  seed %.4f ms  valid %3.0f%%  compiled %3.0f%%  "
                "cached %3.0f%%  same binary %3.0f%%  %.1f eval/s  left %dm%02ds",
                g["generation"].get<int>() + 1, generations, g["speedup"].get<double>(),
                g.value("generation_best_ratio", 0.0), g["seed_ms"].get<double>(),
                100 * g["valid_fraction"].get<double>(), 100 * g["compiled_fraction"].get<double>(),
                100 * g["cached_fraction"].get<double>(), 100 * g.value("same_binary_fraction", 0.0),
                g["evaluations_per_second"].get<double>(),
                static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
  return buf;
}

namespace {

TuningSpace tuning_space(const fitness::KernelSpec& spec) {
  TuningSpace space;
  if (!spec.block_sizes.empty()) space.block_sizes = spec.block_sizes;
  if (!spec.option_sets.empty()) space.option_sets = spec.option_sets;
  return space;
}

}  // namespace

bool evolve(const EvolveOptions& o) {
  // Resuming takes the run's own configuration; only how far to go this call is new.
  RunDirectory run = o.resume ? RunDirectory::open(o.run_dir) : [&] {
    const nlohmann::json config = {{"seed_dir", o.seed_dir.lexically_normal().string()},
                                   {"seed_sha256", load_seed(o.seed_dir).sha256},
                                   {"search", to_json(o.search)}, {"families", o.families}, {"jobs", o.jobs},
                                   {"device", o.device}, {"timing_budget_seconds", o.timing_budget_seconds},
                                   {"clock_ticks", o.clock_ticks || o.rank_by == "clock_ticks"}, {"rank_by", o.rank_by},
                                   {"two_stage_compile", !o.one_stage_compile},
                                   {"compile_processes", !o.compile_threads}};
    return RunDirectory::create(o.run_dir, config, versions_json(o.device));
  }();
  const nlohmann::json& config = run.config();
  const SearchConfig search = search_config_from_json(config.at("search"));
  const Seed seed = load_seed(config.at("seed_dir").get<std::string>());
  // A run's patches refer to the seed's lines: resuming against a changed
  // kernel.cu would silently mean other edits.
  if (const auto pinned = config.value("seed_sha256", std::string()); !pinned.empty() && pinned != seed.sha256)
    throw std::runtime_error(run.path().string() + ": this run was made against a kernel.cu with SHA-256 " + pinned +
                             ", but " + seed.display_path + " now has " + seed.sha256 +
                             ": its patches would mean other edits; start a new run");
  const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);

  OperatorConfig operators;
  operators.enabled = parse_families(config.at("families").get<std::string>());
  operators.context = seed.context;
  // Constant specialisation uses the training workload's fixed values.
  operators.context.constants = mutant_constants_for_spec(seed, spec);
  const EditOperators ops(seed.grammar, operators);

  auto say = [&](const std::string& s) {
    if (!o.quiet) std::cerr << s << std::endl;
  };
  // The evaluator (and its worker, holding GPU memory) lives through the
  // search stages only; validation and comparison start their own processes.
  {
  GpuEvaluatorConfig ec;
  ec.worker_executable = fs::read_symlink("/proc/self/exe");
  ec.device = config.at("device").get<int>();
  ec.jobs = o.jobs;
  ec.cache_dir = fs::absolute(o.cache_dir);
  ec.timing.budget_seconds = config.value("timing_budget_seconds", 0.5);
  ec.timing.clock_ticks = config.value("clock_ticks", false);
  ec.rank_by_clock_ticks = config.value("rank_by", std::string("events")) == "clock_ticks";
  ec.two_stage_compile = config.value("two_stage_compile", true);
  ec.compile_processes = config.value("compile_processes", false);
  GpuEvaluator evaluator(seed, spec, ec);
  // A resumed run keeps its earlier calls' counts: they are added, not overwritten.
  EvaluatorStats earlier;
  try {
    if (const auto j = run.read_json("evaluator_stats.json")) earlier = EvaluatorStats::from_json(*j);
  } catch (const std::exception& e) {
    say(std::string("warning: evaluator_stats.json unreadable, counting from zero: ") + e.what());
  }
  auto write_stats = [&] {
    EvaluatorStats all = earlier;
    all += evaluator.stats();
    run.write_text("evaluator_stats.json", all.to_json().dump(2) + "\n");
  };

  // Stage 1: the tuned seed is the baseline.
  auto seed_tuning = run.read_json("tuning_seed.json");
  if (!seed_tuning) {
    say("tuning the seed (block size x compile options)...");
    evaluator.use_workload("train", tuning_data_seed(search.seed));
    const TuningResult t = tune(evaluator, grammar::Patch{}, tuning_space(spec));
    seed_tuning = t.to_json();
    run.write_text("tuning_seed.json", seed_tuning->dump(2) + "\n");
  }
  evaluator.set_tuning(tuning_from_json(seed_tuning->at("best")));
  evaluator.set_seed_time(seed_tuning->at("best_median_ms").get<double>());
  say("baseline: " + seed_tuning->at("best").dump() + " " + std::to_string(seed_tuning->at("best_median_ms").get<double>()) + " ms");

  // Stage 1b: what the seed's switches give alone, so the result can say
  // what GI's edits added beyond choosing a path.
  std::optional<SwitchBaseline> baseline;
  if (const auto baseline_json = run.read_json("switch_baseline.json")) {
    baseline = SwitchBaseline::from_json(*baseline_json);
  } else if (!seed.context.switches.empty()) {
    say("measuring every switch setting without line edits...");
    evaluator.use_workload("train", tuning_data_seed(search.seed));
    baseline = measure_switch_baseline(evaluator, seed, tuning_from_json(seed_tuning->at("best")), tuning_space(spec));
    run.write_text("switch_baseline.json", baseline->to_json().dump(2) + "\n");
    say("best switch setting: " + (baseline->best_setting.empty() ? std::string("the seed's own") : baseline->best_setting) +
        ", " + std::to_string(baseline->best_median_ms) + " ms " + to_json(baseline->best_tuning).dump());
  }

  // The search ranks its variants at the best switch setting's tuning when a
  // hand-written path beats the seed's own (gi/switch_baseline.hpp).
  if (baseline) {
    const Tuning seed_best = tuning_from_json(seed_tuning->at("best"));
    const Tuning t = search_tuning(*baseline, seed_best);
    if (!(t == seed_best)) {
      evaluator.set_tuning(t);
      say("the search evaluates its variants at the best switch setting's tuning " + to_json(t).dump());
    }
  }

  // Stage 2: the search.
  SearchState state = resume_state(run);
  if (state.next_generation < search.generations) {
    DriverOptions d;
    d.max_generations_this_call = o.max_generations_this_call;
    d.on_generation = [&](const nlohmann::json& g) {
      say(progress_line(g, search.generations));
      write_stats();
    };
    state = run_search(search, ops, evaluator, run, state, d);
    if (state.next_generation < search.generations) {
      say("stopped after generation " + std::to_string(state.next_generation) + "; continue with: gi evolve --resume " +
          run.path().string());
      return false;
    }
  }
  // Stage 3: retune the winner (gi/winner_retune.hpp).
  auto best_tuning = run.read_json("tuning_best.json");
  if (!best_tuning) {
    say("tuning the best variant...");
    evaluator.use_workload("train", tuning_data_seed(search.seed));
    best_tuning = retune_winner(evaluator, state, tuning_space(spec), baseline, say);
    run.write_text("tuning_best.json", best_tuning->dump(2) + "\n");
  }
  const grammar::Patch best = retuned_winner_patch(*best_tuning, state);
  run.write_text("best.gi", patch_file_for(seed, best));
  // Stage 4: minimise under the winner's tuning.
  if (!run.read_json("minimised.json")) {
    say("minimising the best patch...");
    evaluator.use_workload("train", tuning_data_seed(search.seed));
    evaluator.set_tuning(tuning_from_json(best_tuning->at("best")));
    const MinimisedPatch m = minimise(evaluator, best, state.noise_margin);
    run.write_text("minimised.json", m.to_json().dump(2) + "\n");
    run.write_text("minimised.gi", patch_file_for(seed, m.patch));
  }
  write_stats();
  }

  // Stages 5-7: held-out validation and sanitizers, the interleaved
  // seed-versus-evolved measurement, and the results for developers.
  PostEvolveOptions post;
  post.device = config.at("device").get<int>();
  post.cache_dir = fs::absolute(o.cache_dir);
  post.train_data_seed = tuning_data_seed(search.seed);
  post.say = say;
  return post_evolve(run, seed, spec, o.evolved_root, post);
}

}  // namespace gi
