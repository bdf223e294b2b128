// `gi evolve SEED_DIR` / `gi evolve --resume RUN_DIR`: an evolution run on the GPU.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/cli/gpu_list.hpp"
#include "gi/run/evolution_run.hpp"
#include "gi/search/search_strategy.hpp"

namespace gi::cli {

void add_evolve(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "evolve", "Evolve a seed on the GPU: tune the seed, run the search (GP by default: population 300, 50 "
                "generations), retune and minimise the winner. Checkpoints after every generation; --resume continues.");
  auto o = std::make_shared<EvolveOptions>();
  o->search.data_every = 0;  // the run chooses (gi/run/evolution_run.hpp)
  auto resume = std::make_shared<std::string>();
  cmd->add_option("SEED_DIR", o->seed_dir, "seed folder (kernel.cu + spec.json); or a library seed: family/kernel")
      ->transform(library_seed());
  cmd->add_option("--run-dir", o->run_dir, "run directory to create (default runs/<kernel>-<seed>)");
  cmd->add_option("--resume", *resume, "continue the run in this directory (its own settings are kept)");
  cmd->add_option("--algorithm", o->search.algorithm, "the search strategy: " + search_strategy_names())
      ->capture_default_str();
  cmd->add_option("--population", o->search.population, "population size")->capture_default_str();
  cmd->add_option("--generations", o->search.generations, "generations")->capture_default_str();
  cmd->add_option("--data-every", o->search.data_every,
                  "generations that share one training data set; 0: chosen from the time a set takes to make (at most 8)")
      ->capture_default_str();
  cmd->add_option("--budget-minutes", o->search.budget_seconds,
                  "minutes of search (over every call of a resumed run); the generation in progress finishes; 0: none")
      ->transform([](std::string s) { return std::to_string(60 * std::stod(s)); });
  cmd->add_option("--seed", o->search.seed, "random seed (same seed and measurements: same run)")->capture_default_str();
  cmd->add_option("--families", o->families, "edit families (ablation), comma-separated, or 'all'")->capture_default_str();
  cmd->add_flag("--no-launch-tuning", [o](std::int64_t n) { o->launch_tuning = n == 0; },
                "keep the spec's default block size and no compile options (ablation: the edits' effect alone)");
  cmd->add_flag("--no-search", [o](std::int64_t n) { o->search_stage = n == 0; },
                "skip the search (ablation: launch tuning alone)");
  cmd->add_flag("--no-parameter-sweep", [o](std::int64_t n) { o->parameter_sweep = n == 0; },
                "keep the search's values of the winner's edit parameters (coarsen factor, aggregate level, ...) "
                "instead of sweeping each (ablation)");
  cmd->add_option("--jobs", o->jobs, "parallel NVRTC compiles")->capture_default_str();
  cmd->add_option("--device", o->device, "CUDA device")->capture_default_str();
  auto gpus = std::make_shared<std::string>();
  cmd->add_option("--gpus", *gpus,
                  "'all' or devices, e.g. 0,1: measure the search on several GPUs of this host (one worker each, every "
                  "time scaled by its own GPU's seed time); validation and the comparison run on the first");
  cmd->add_option("--cache", o->cache_dir, "cache folder (compiles, references)")->capture_default_str();
  cmd->add_option("--max-generations-this-call", o->max_generations_this_call,
                  "stop (resumably) after this many generations")->capture_default_str();
  cmd->add_option("--timing-budget", o->timing_budget_seconds, "seconds of timing per candidate")->capture_default_str();
  cmd->add_option("--evolved-dir", o->evolved_root, "where results for developers go")->capture_default_str();
  cmd->add_flag("--clock-ticks", o->clock_ticks,
                "also build every variant with in-kernel clock64/%globaltimer counters and log its clock ticks");
  cmd->add_option("--rank-by", o->rank_by, "what ranks variants: events (CUDA event time) or clock_ticks")
      ->check(CLI::IsMember({"events", "clock_ticks"}))
      ->capture_default_str();
  cmd->add_flag("--one-stage-compile", o->one_stage_compile,
                "compile each variant straight to a cubin with NVRTC (default: PTX first, ptxas once per distinct PTX)");
  cmd->add_flag("--compile-threads", o->compile_threads,
                "run NVRTC in threads of this process (default: on --jobs compile-server processes, which scale better)");
  cmd->add_flag("--quiet", o->quiet, "no progress lines");
  cmd->callback([o, resume, gpus] {
    EvolveOptions opts = *o;
    if (!gpus->empty()) opts.devices = parse_gpu_list(*gpus, "--gpus");
    if (!resume->empty()) {
      opts.resume = true;
      opts.run_dir = *resume;
    } else {
      if (opts.seed_dir.empty()) throw std::runtime_error("evolve: give SEED_DIR, or --resume RUN_DIR");
      if (opts.run_dir.empty())
        opts.run_dir = std::filesystem::path("runs") /
                       (opts.seed_dir.filename().string() + "-" + std::to_string(opts.search.seed));
    }
    const RunOutcome outcome = evolve(opts);
    std::cout << to_string(outcome) << ": " << opts.run_dir.string() << "\n";
    if (outcome == RunOutcome::Rejected) throw CLI::RuntimeError(3);
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("evolve", gi::cli::add_evolve)
