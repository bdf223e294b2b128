#include "gi/run/evolution_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "gi/search/minimise.hpp"
#include "gi/search/parameter_sweep.hpp"
#include "gi/search/mutant_survey.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/run/post_evolution.hpp"
#include "gi/search/switch_baseline.hpp"
#include "gi/publish/versions.hpp"
#include "gi/run/winner_retune.hpp"
#include "gi/library/seed_coverage.hpp"
#include "gi/publish/validation.hpp"
#include "fitness/process/atomic_file.hpp"
#include "grammar/source_hash.hpp"

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

TuningSpace tuning_space(const fitness::KernelSpec& spec, bool launch_tuning) {
  TuningSpace space;
  if (!launch_tuning) {  // the launch the user has: the spec's default block size, no extra options
    space.block_sizes = {spec.default_block_size};
    return space;
  }
  if (!spec.block_sizes.empty()) space.block_sizes = spec.block_sizes;
  if (!spec.option_sets.empty()) space.option_sets = spec.option_sets;
  return space;
}

// The run's data_every: as configured, or (0: auto) chosen once, before the
// first generation, from how long that generation's training set took to
// make, and kept in search_data.json so a resumed run shares data alike.
int resolve_data_every(RunDirectory& run, const SearchConfig& search, StageEvaluator& evaluator,
                       const std::function<void(const std::string&)>& say) {
  if (search.data_every > 0) return search.data_every;
  if (const auto j = run.read_json("search_data.json")) {
    try {
      return std::max(1, j->at("data_every").get<int>());
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error((run.path() / "search_data.json").string() + ": data_every: " + e.what());
    }
  }
  const auto start = std::chrono::steady_clock::now();
  evaluator.begin_generation(0, generation_data_seed(search.seed, 0));  // generation 0's set, whatever data_every becomes
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int k = auto_data_every(seconds, search.population);
  run.write_text("search_data.json", nlohmann::json{{"data_every", k}, {"prepare_seconds", seconds}}.dump(2) + "\n");
  say("training data: " + std::to_string(seconds).substr(0, 5) + " s to make a set; " + std::to_string(k) +
      " generation(s) share each set");
  return k;
}

}  // namespace

const char* to_string(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::InProgress: return "in_progress";
    case RunOutcome::Complete: return "complete";
    case RunOutcome::Rejected: return "rejected";
  }
  return "?";
}

int auto_data_every(double prepare_seconds, int population) {
  const double generation_seconds = std::max(1, population) / 150.0;
  const int k = static_cast<int>(std::ceil(prepare_seconds / generation_seconds));
  return std::clamp(k, 1, 8);
}

RunBackend gpu_backend(const EvolveOptions& o) {
  RunBackend b;
  b.make_evaluator = [o](const Seed& seed, const fitness::KernelSpec& spec, const nlohmann::json& config) {
    GpuEvaluatorConfig ec;
    ec.worker_executable = fs::read_symlink("/proc/self/exe");
    ec.device = config.at("device").get<int>();
    ec.devices = config.value("devices", std::vector<int>{});
    ec.jobs = o.jobs;
    ec.cache_dir = fs::absolute(o.cache_dir);
    ec.timing.budget_seconds = config.value("timing_budget_seconds", 0.5);
    ec.timing.clock_ticks = config.value("clock_ticks", false);
    ec.rank_by_clock_ticks = config.value("rank_by", std::string("events")) == "clock_ticks";
    ec.two_stage_compile = config.value("two_stage_compile", true);
    ec.compile_processes = config.value("compile_processes", false);
    return std::unique_ptr<StageEvaluator>(std::make_unique<GpuEvaluator>(seed, spec, ec));
  };
  b.finish = [o](RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                 const std::function<void(const std::string&)>& say) {
    PostEvolveOptions post;
    post.device = run.config().at("device").get<int>();
    post.cache_dir = fs::absolute(o.cache_dir);
    post.train_data_seed = tuning_data_seed(search_config_from_json(run.config().at("search")).seed);
    post.sanitizers = run.config().value("sanitizers", true);
    post.say = say;
    return post_evolve(run, seed, spec, o.evolved_root, post);
  };
  b.check_seed = [o](RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec,
                     const std::function<void(const std::string&)>& say) {
    if (!spec.reference_is_seed || run.read_json("seed_reference_checks.json")) return;
    // The checks depend on the seed and its spec only: a study's many runs of
    // one seed check it once (kept in the cache under both hashes).
    const fs::path cached = fs::absolute(o.cache_dir) / "seed_reference_checks" /
                            (seed.sha256 + "-" + grammar::sha256_hex(read_text_file(seed.dir / "spec.json")) + ".json");
    if (fs::is_regular_file(cached)) {
      say("the seed is its own reference: its checks passed before (" + cached.string() + ")");
      run.write_text("seed_reference_checks.json", read_text_file(cached));
      return;
    }
    ValidationOptions v;
    v.gi_binary = fs::read_symlink("/proc/self/exe");
    v.device = run.config().at("device").get<int>();
    v.cache_dir = fs::absolute(o.cache_dir);
    v.log = say;
    const fs::path scratch = *v.cache_dir / ("seed-reference-" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    say("the seed is its own reference: compute-sanitizer first, on its training workload");
    nlohmann::json record = nlohmann::json::object();
    std::optional<SanitizerResult> failed;
    for (const char* tool : {"memcheck", "racecheck"}) {
      const SanitizerResult r = run_sanitizer(tool, seed, grammar::Patch{}, Tuning{spec.default_block_size, {}},
                                              "train", v, scratch);
      record[tool] = r.to_json();
      if (!r.passed()) {
        failed = r;
        break;
      }
    }
    fs::remove_all(scratch);
    if (failed)
      throw std::runtime_error("the seed cannot be its own reference: compute-sanitizer " + failed->tool + " " +
                               failed->status + (failed->summary.empty() ? "" : " (" + failed->summary + ")") +
                               (failed->reason.empty() ? "" : ": " + failed->reason) + "\n" + failed->output_tail);
    // The seed's branches the training set never takes could be deleted by
    // an edit that still matches the seed on training data: a user's seed
    // must pass coverage like the library's (gi verify) before its search.
    say("the seed is its own reference: branch coverage of its training set");
    fitness::GpuRunner runner(v.device);
    const SeedCoverage coverage = measure_seed_coverage(runner, seed, spec, Tuning{spec.default_block_size, {}},
                                                        v.cache_dir, tuning_data_seed(search_config_from_json(run.config().at("search")).seed));
    record["coverage"] = coverage.passed() ? nlohmann::json("passed") : nlohmann::json(coverage.failure());
    if (!coverage.passed())
      throw std::runtime_error("the seed's training set leaves branches untaken (add a workload that takes them, "
                               "or exempt them in spec.json's coverage_exempt with a reason; gi coverage " +
                               seed.dir.string() + " shows them): " + coverage.failure());
    run.write_text("seed_reference_checks.json", record.dump(2) + "\n");
    fs::create_directories(cached.parent_path());
    fitness::write_file_atomically(cached, record.dump(2) + "\n");
  };
  return b;
}

RunOutcome evolve(const EvolveOptions& o) { return evolve(o, gpu_backend(o)); }

namespace {

// Wall time per stage, summed over the calls of a resumed run
// (stage_seconds.json): what an overnight run spends beside the search.
class StageClock {
 public:
  explicit StageClock(RunDirectory& run) : run_(run) {
    try {
      if (const auto j = run.read_json("stage_seconds.json")) seconds_ = *j;
    } catch (const std::exception&) {
      seconds_ = nlohmann::json::object();  // a damaged record of times loses the times only
    }
    if (!seconds_.is_object()) seconds_ = nlohmann::json::object();
  }
  // Runs `body` as `stage`; a failure is rethrown as StageError naming it.
  template <typename F>
  auto time(const std::string& stage, F&& body) {
    const auto start = std::chrono::steady_clock::now();
    struct Record {
      StageClock& clock;
      const std::string& stage;
      std::chrono::steady_clock::time_point start;
      ~Record() { clock.add(stage, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()); }
    } record{*this, stage, start};
    try {
      return body();
    } catch (const StageError&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw StageError(stage, e.what());
    } catch (const std::logic_error& e) {
      throw StageError(stage, e.what());
    }
  }

 private:
  void add(const std::string& stage, double s) {
    seconds_[stage] = seconds_.value(stage, 0.0) + s;
    try {
      run_.write_text("stage_seconds.json", seconds_.dump(2) + "\n");
    } catch (const std::exception&) {
      // The times are a record only; a full disk fails the next real write.
    }
  }
  RunDirectory& run_;
  nlohmann::json seconds_;
};

}  // namespace

RunOutcome evolve(const EvolveOptions& o, const RunBackend& backend) {
  // Resuming takes the run's own configuration; only how far to go this call is new.
  RunDirectory run = o.resume ? RunDirectory::open(o.run_dir) : [&] {
    const nlohmann::json config = {{"seed_dir", o.seed_dir.lexically_normal().string()},
                                   {"seed_sha256", load_seed(o.seed_dir).sha256},
                                   {"search", to_json(o.search)}, {"families", o.families}, {"jobs", o.jobs},
                                   {"device", o.device}, {"timing_budget_seconds", o.timing_budget_seconds},
                                   {"clock_ticks", o.clock_ticks || o.rank_by == "clock_ticks"}, {"rank_by", o.rank_by},
                                   {"two_stage_compile", !o.one_stage_compile},
                                   {"compile_processes", !o.compile_threads},
                                   {"launch_tuning", o.launch_tuning}, {"search_stage", o.search_stage},
                                   {"parameter_sweep", o.parameter_sweep}, {"sanitizers", o.sanitizers}};
    nlohmann::json with_devices = config;
    if (!o.devices.empty()) {
      with_devices["devices"] = o.devices;
      with_devices["device"] = o.devices.front();
    }
    return RunDirectory::create(o.run_dir, with_devices, versions_json(o.devices.empty() ? o.device : o.devices.front()));
  }();
  const nlohmann::json& config = run.config();
  SearchConfig search = search_config_from_json(config.at("search"));
  const Seed seed = load_seed(config.at("seed_dir").get<std::string>());
  // A run's patches refer to the seed's lines: resuming against a changed
  // kernel.cu would silently mean other edits.
  if (const auto pinned = config.value("seed_sha256", std::string()); !pinned.empty() && pinned != seed.sha256)
    throw std::runtime_error(run.path().string() + ": this run was made against a kernel.cu with SHA-256 " + pinned +
                             ", but " + seed.display_path + " now has " + seed.sha256 +
                             ": its patches would mean other edits; start a new run");
  const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
  // Runs made before these switches existed tuned and searched.
  const bool launch_tuning = config.value("launch_tuning", true);
  const bool search_stage = config.value("search_stage", true);
  const bool parameter_sweep = config.value("parameter_sweep", true);

  OperatorConfig operators;
  operators.enabled = parse_families(config.at("families").get<std::string>());
  operators.context = seed.context;
  // Constant specialisation uses the training workload's fixed values.
  operators.context.constants = mutant_constants_for_spec(seed, spec);
  const EditOperators ops(seed.grammar, operators);

  const std::function<void(const std::string&)> say = o.say ? o.say : [&](const std::string& s) {
    if (!o.quiet) std::cerr << s << std::endl;
  };
  StageClock clock(run);
  // The evaluator (and its worker, holding GPU memory) lives through the
  // search stages only; validation and comparison start their own processes.
  // It is made only when one of those stages has work left, so a run whose
  // search is done is published again (post_evolution.hpp) without a GPU.
  const bool search_stages_done = run.read_json("tuning_seed.json") && run.read_json("tuning_best.json") &&
                                  run.read_json("minimised.json") && fs::exists(run.path() / "best.gi");
  if (!search_stages_done) {
  if (backend.check_seed) backend.check_seed(run, seed, spec, say);
  std::unique_ptr<StageEvaluator> evaluator_owner =
      clock.time("start", [&] { return backend.make_evaluator(seed, spec, config); });
  StageEvaluator& evaluator = *evaluator_owner;
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
    seed_tuning = clock.time("tuning", [&] {
      evaluator.use_workload("train", tuning_data_seed(search.seed));
      return tune(evaluator, grammar::Patch{}, tuning_space(spec, launch_tuning)).to_json();
    });
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
  } else if (!seed.context.switches.empty() && operators.enabled.count("define") && search_stage) {
    // (Without the define family, or without a search, the run is an
    // ablation's cell of edits without switches or of launch tuning alone:
    // its result must not be a switch setting.)
    say("measuring every switch setting without line edits...");
    baseline = clock.time("switch_baseline", [&] {
      evaluator.use_workload("train", tuning_data_seed(search.seed));
      return measure_switch_baseline(evaluator, seed, tuning_from_json(seed_tuning->at("best")), tuning_space(spec, launch_tuning));
    });
    run.write_text("switch_baseline.json", baseline->to_json().dump(2) + "\n");
    say("best switch setting: " + (baseline->best_setting.empty() ? std::string("the seed's own") : baseline->best_setting) +
        ", " + std::to_string(baseline->best_median_ms) + " ms " + to_json(baseline->best_tuning).dump());
  }

  // The search ranks its variants at the best switch setting's tuning when a
  // hand-written path beats the seed's own (gi/search/switch_baseline.hpp).
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
  if (!search_stage) say("no search in this run (launch tuning alone)");
  if (search_stage && !search_finished(search, state)) {
    clock.time("search", [&] {
      search.data_every = resolve_data_every(run, search, evaluator, say);
      DriverOptions d;
      d.max_generations_this_call = o.max_generations_this_call;
      d.stop_requested = o.stop_requested;
      d.on_generation = [&](const nlohmann::json& g) {
        say(progress_line(g, search.generations));
        write_stats();
        if (o.on_generation) o.on_generation(g);
      };
      state = run_search(search, ops, evaluator, run, state, d);
    });
    if (!search_finished(search, state)) {
      say("stopped after generation " + std::to_string(state.next_generation) + "; continue with: gi evolve --resume " +
          run.path().string());
      write_stats();
      return RunOutcome::InProgress;
    }
  }
  // Stage 2b: the winner's edit parameters swept (gi/search/parameter_sweep.hpp),
  // on the retuning's data at the search's tuning.
  auto best_tuning = run.read_json("tuning_best.json");
  std::optional<grammar::Patch> swept;
  bool retune_data_loaded = false;  // the sweep loads the data the retuning uses
  if (!best_tuning && search_stage && parameter_sweep && state.best && !state.best->patch.edits.empty()) {
    if (const auto j = run.read_json("swept.json")) {
      swept = grammar::parse_patch(j->at("patch").get<std::string>(), "swept.json patch");
    } else {
      say("sweeping the winner's edit parameters...");
      try {
        const SweptPatch sw = clock.time("parameter_sweep", [&] {
          evaluator.use_workload("train", tuning_data_seed(search.seed));
          retune_data_loaded = true;
          return sweep_parameters(evaluator, ops, state.best->patch, state.noise_margin);
        });
        run.write_text("swept.json", sw.to_json().dump(2) + "\n");
        swept = sw.patch;
        say("swept: " + grammar::to_string(sw.patch) + ", " + std::to_string(sw.eval.median_ms) + " ms after " +
            std::to_string(sw.evaluations) + " evaluations");
      } catch (const std::runtime_error& e) {
        // The winner may fit the search's data only: the retuning's
        // candidates deal with that, as without a sweep.
        say(std::string("no parameter sweep: ") + e.what());
      }
    }
  }
  // Stage 3: retune the winner (gi/run/winner_retune.hpp).
  if (!best_tuning) {
    say("tuning the best variant...");
    best_tuning = clock.time("retune", [&] {
      if (!retune_data_loaded) evaluator.use_workload("train", tuning_data_seed(search.seed));
      return retune_winner(evaluator, state, tuning_space(spec, launch_tuning), baseline, say, swept);
    });
    run.write_text("tuning_best.json", best_tuning->dump(2) + "\n");
  }
  const grammar::Patch best = retuned_winner_patch(*best_tuning, state);
  run.write_text("best.gi", patch_file_for(seed, best));
  // Stage 4: minimise under the winner's tuning.
  if (!run.read_json("minimised.json")) {
    say("minimising the best patch...");
    const MinimisedPatch m = clock.time("minimise", [&] {
      evaluator.use_workload("train", tuning_data_seed(search.seed));
      evaluator.set_tuning(tuning_from_json(best_tuning->at("best")));
      return minimise(evaluator, best, state.noise_margin);
    });
    run.write_text("minimised.json", m.to_json().dump(2) + "\n");
    run.write_text("minimised.gi", patch_file_for(seed, m.patch));
  }
  write_stats();
  }

  // Stages 5-7: held-out validation and sanitizers, the interleaved
  // seed-versus-evolved measurement, and the results for developers.
  const bool published = clock.time("validation_and_comparison", [&] { return backend.finish(run, seed, spec, say); });
  return published ? RunOutcome::Complete : RunOutcome::Rejected;
}

}  // namespace gi
