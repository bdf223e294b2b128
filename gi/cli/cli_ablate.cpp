// `gi ablate STUDY.json --out DIR`: an ablation study of edit families,
// raw material and search strategies (gi/study/study_plan.hpp), every run a
// normal run directory; call again with the same --out to resume. The
// statistics and plots: scripts/report/study_stats.py DIR.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/study/study_runner.hpp"

namespace gi::cli {

void add_ablate(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "ablate", "Run an ablation study (cells x kernels x RNG seeds, every run a normal run directory; the named cells "
                "everything, line_and_cuda_edits, switches_only and launch_tuning_only always included); each run's "
                "final kernel is timed interleaved against the seed at its default launch. Give the same --out to "
                "resume; scripts/report/study_stats.py makes the statistics and plots");
  auto o = std::make_shared<AblateOptions>();
  auto shard_text = std::make_shared<std::string>();
  cmd->add_option("STUDY", o->study_file, "the study's plan (JSON; see gi/study/study_plan.hpp)")->required();
  cmd->add_option("--out", o->out_dir, "the study folder; give it again to resume")->required();
  cmd->add_option("--jobs", o->run.jobs, "parallel NVRTC compiles")->capture_default_str();
  cmd->add_option("--device", o->run.device, "CUDA device")->capture_default_str();
  cmd->add_option("--cache", o->run.cache_dir, "cache folder (compiles, references)")->capture_default_str();
  cmd->add_option("--max-minutes-this-call", o->max_minutes_this_call,
                  "stop (resumably) at the first generation end past this many minutes; 0: none")
      ->capture_default_str();
  cmd->add_option("--shard", *shard_text,
                  "I/N: take runs I, I+N, ... of the study (default: from mpirun's or Slurm's variables, else all)");
  cmd->add_flag("--quiet", o->run.quiet, "no progress lines of the runs' stages");
  cmd->add_option("--redo", o->redo_cells,
                  "a cell whose runs are made again (their folders moved aside to <run>.superseded-N); repeatable");
  cmd->callback([o, shard_text] {
    AblateOptions opts = *o;
    opts.shard = shard_for_this_process(*shard_text);
    const StudySummary s = run_study(opts, gpu_study_backend());
    std::cout << "study " << opts.out_dir.string() << ": " << s.complete << " complete, " << s.rejected << " rejected, "
              << s.failed << " failed, " << s.not_applicable << " not applicable, " << s.pending << " to go"
              << (s.finished() ? "" : " (call again with the same --out to go on)") << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("ablate", gi::cli::add_ablate)
