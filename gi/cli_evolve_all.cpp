// `gi evolve-all`: evolve every kernel of the library (or those --kernels
// selects) for the GPU this runs on, resumably (gi/evolve_all.hpp).
#include <iostream>

#include "gi/cli.hpp"
#include "gi/evolve_all.hpp"
#include "gi/versions.hpp"

namespace gi::cli {

void register_evolve_all(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "evolve-all",
      "Evolve every seed of the library in turn (tuning, search, minimisation, validation, publication to "
      "evolved/<gpu>/), each in its own run directory under --out. Call it again with the same --out to go on "
      "from the kernel and generation reached; a kernel that fails is recorded and the run goes on.");
  auto o = std::make_shared<EvolveAllOptions>();
  o->run.search.population = 100;
  o->run.search.generations = 50;
  o->run.search.data_every = 0;  // each run chooses (gi/evolution_run.hpp)
  o->seeds_root = std::filesystem::path(GI_SOURCE_DIR) / "seeds";
  cmd->add_option("--kernels", o->kernels, "comma-separated globs over family/kernel (gi list), e.g. 'tools/*,bspline/*'")
      ->capture_default_str();
  cmd->add_option("--budget-per-kernel", o->budget_per_kernel_minutes,
                  "minutes of search per kernel (tuning, validation and sanitizers come on top)")
      ->capture_default_str();
  cmd->add_option("--out", o->out_dir, "the evolve-all folder (default runs/evolve-all-<gpu>); give it again to resume");
  cmd->add_option("--seeds", o->seeds_root, "the seed library")->capture_default_str();
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
  cmd->callback([o] {
    EvolveAllOptions opts = *o;
    opts.gpu_slug = versions_json(opts.run.device).value("gpu_slug", std::string("gpu"));
    if (opts.out_dir.empty()) opts.out_dir = std::filesystem::path("runs") / ("evolve-all-" + opts.gpu_slug);
    const EvolveAllSummary s = evolve_all(opts, [](const EvolveOptions& run) { return gpu_backend(run); });
    std::cout << (s.finished() ? "finished" : "in progress") << ": " << opts.out_dir.string() << ": " << s.complete
              << " complete, " << s.rejected << " rejected, " << s.failed << " failed, " << s.pending << " to go\n";
  });
}

}  // namespace gi::cli
