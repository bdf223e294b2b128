// `gi evolve-all`: evolve every kernel of the library (or those --kernels
// selects) for the GPU this runs on, resumably (gi/run/evolve_all.hpp).
#include <unistd.h>

#include <iostream>

#include "fitness/gpu/cuda_devices.hpp"
#include "gi/run/child_processes.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/library/library_root.hpp"
#include "gi/run/evolve_all.hpp"
#include "gi/cli/gpu_list.hpp"
#include "gi/run/shard.hpp"
#include "gi/publish/versions.hpp"

namespace gi::cli {

namespace {

// The options this call was given, as arguments for a child, leaving out
// those the child gets its own value of.
std::vector<std::string> given_arguments(const CLI::App& cmd, const std::vector<std::string>& skip) {
  std::vector<std::string> args;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string name = "--" + opt->get_lnames().front();
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    if (opt->get_expected_max() == 0) {
      args.push_back(name);  // a flag
      continue;
    }
    for (const std::string& value : opt->results()) {
      args.push_back(name);
      args.push_back(value);
    }
  }
  return args;
}

}  // namespace

void add_evolve_all(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "evolve-all",
      "Evolve every seed of the library in turn (tuning, search, minimisation, validation, publication to "
      "evolved/<gpu>/), each in its own run directory under --out. Call it again with the same --out to go on "
      "from the kernel and generation reached; a kernel that fails is recorded and the run goes on.");
  auto o = std::make_shared<EvolveAllOptions>();
  o->run.search.population = 100;
  o->run.search.generations = 50;
  o->run.search.data_every = 0;  // each run chooses (gi/run/evolution_run.hpp)
  o->seeds_root.clear();  // the library's seeds (gi doctor names them), unless --seeds
  cmd->add_option("--kernels", o->kernels, "comma-separated globs over family/kernel (gi list), e.g. 'tools/*,bspline/*'")
      ->capture_default_str();
  cmd->add_option("--budget-per-kernel", o->budget_per_kernel_minutes,
                  "minutes of search per kernel (tuning, validation and sanitizers come on top)")
      ->capture_default_str();
  cmd->add_option("--out", o->out_dir, "the evolve-all folder (default runs/evolve-all-<gpu>); give it again to resume");
  cmd->add_option("--seeds", o->seeds_root, "the seed library (default: the library's seeds/, see gi doctor)");
  cmd->add_option("--population", o->run.search.population, "population per generation")->capture_default_str();
  cmd->add_option("--generations", o->run.search.generations, "most generations per kernel (the budget may end it first)")
      ->capture_default_str();
  cmd->add_option("--seed", o->run.search.seed, "random seed of every kernel's run")->capture_default_str();
  cmd->add_option("--data-every", o->run.search.data_every,
                  "generations that share one training data set; 0: each run chooses (at most 8)")
      ->capture_default_str();
  cmd->add_option("--families", o->run.families, "edit families, comma-separated, or 'all'")->capture_default_str();
  cmd->add_option("--jobs", o->run.jobs, "parallel NVRTC compiles")->capture_default_str();
  cmd->add_option("--device", o->run.device, "CUDA device")->capture_default_str();
  cmd->add_option("--cache", o->run.cache_dir, "cache folder (compiles, references)")->capture_default_str();
  cmd->add_option("--evolved-dir", o->run.evolved_root, "where results for developers go")->capture_default_str();
  cmd->add_option("--max-minutes-this-call", o->max_minutes_this_call,
                  "stop (resumably) at the first generation end after this many minutes; 0: run to the end")
      ->capture_default_str();
  cmd->add_flag("--retry-failed", o->retry_failed, "run the kernels recorded as failed or rejected again");
  cmd->add_flag("--quiet", o->run.quiet, "only evolve-all's own lines, not each run's");
  auto shard_text = std::make_shared<std::string>();
  auto gpus_text = std::make_shared<std::string>();
  cmd->add_option("--shard", *shard_text,
                  "I/N: take kernels I, I+N, I+2N, ... (0-based) of the plan; other processes take the rest. Default: "
                  "from mpirun, srun or a Slurm job array when one started this process, else every kernel");
  cmd->add_option("--gpus", *gpus_text,
                  "'all' or devices, e.g. 0,1: one child process per GPU, each a shard of the same --out "
                  "(--jobs is shared out among them unless given)");
  cmd->callback([o, cmd, shard_text, gpus_text] {
    EvolveAllOptions opts = *o;
    if (opts.seeds_root.empty()) opts.seeds_root = library().seeds();
    const bool device_given = cmd->get_option("--device")->count() > 0;
    opts.shard = shard_for_this_process(*shard_text);
    // A launcher with several ranks per host gives each its own GPU.
    if (!device_given && gpus_text->empty()) {
      if (const auto local = local_rank_from_environment(); local && opts.shard.count > 1) {
        const int visible = static_cast<int>(fitness::probe_cuda().gpus.size());
        if (visible > 0) opts.run.device = *local % visible;
      }
    }
    opts.gpu_slug = versions_json(opts.run.device).value("gpu_slug", std::string("gpu"));
    if (opts.out_dir.empty()) opts.out_dir = std::filesystem::path("runs") / ("evolve-all-" + opts.gpu_slug);
    if (!gpus_text->empty()) {
      if (!shard_text->empty() || opts.shard.count > 1)
        throw std::runtime_error("--gpus: this process is a shard already (--shard or its launcher); give one or the other");
      const std::vector<int> gpus = parse_gpu_list(*gpus_text, "--gpus");
      const int n = static_cast<int>(gpus.size());
      const bool jobs_given = cmd->get_option("--jobs")->count() > 0;
      std::vector<std::vector<std::string>> children;
      for (int i = 0; i < n; ++i) {
        std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(), "evolve-all"};
        for (const std::string& a : given_arguments(*cmd, {"--gpus", "--shard", "--device", "--out", "--jobs"}))
          argv.push_back(a);
        argv.insert(argv.end(), {"--out", opts.out_dir.string(), "--device", std::to_string(gpus[i]), "--shard",
                                 std::to_string(i) + "/" + std::to_string(n), "--jobs",
                                 std::to_string(jobs_given ? opts.run.jobs : std::max(1, opts.run.jobs / n))});
        children.push_back(argv);
      }
      std::cerr << "[evolve-all] " << n << " GPUs, one shard of " << opts.out_dir.string() << " each\n";
      const std::vector<ChildResult> done = run_children(children);
      int failed = 0;
      for (int i = 0; i < n; ++i) {
        if (done[i].exit_code == 0) continue;
        ++failed;
        std::cerr << "[evolve-all] the shard on GPU " << gpus[i] << " ended with exit code " << done[i].exit_code
                  << (done[i].problem.empty() ? "" : ": " + done[i].problem) << "\n";
      }
      if (failed > 0) throw std::runtime_error(std::to_string(failed) + " of " + std::to_string(n) + " shards failed; call again to resume");
      return;
    }
    const EvolveAllSummary s = evolve_all(opts, [](const EvolveOptions& run) { return gpu_backend(run); });
    std::cout << (s.finished() ? "finished" : "in progress") << ": " << opts.out_dir.string() << ": " << s.complete
              << " complete, " << s.rejected << " rejected, " << s.failed << " failed, " << s.pending << " to go";
    if (opts.shard.count > 1) std::cout << " (" << s.shard_pending << " of them this shard's, " << opts.shard.label() << ")";
    std::cout << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("evolve-all", gi::cli::add_evolve_all)
