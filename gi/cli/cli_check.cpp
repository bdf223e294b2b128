// `gi check SEED_DIR [--patch FILE] [--workload W ...] [--block B] [--option=O ...]`:
// compiles the (patched) seed, runs it once checked on each workload named
// (`all`: every training and held-out one) in this process, one compile and
// one CUDA context for all, and prints each CheckReport as JSON (an array
// for several); exits 0 only when every one passed. Post-evolution
// validation runs it under compute-sanitizer.
#include <iostream>

#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/cli/check_report_json.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/evaluate/seed_reference.hpp"
#include "grammar/patch_apply.hpp"

namespace gi::cli {

void add_check(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Run a (patched) seed once on one workload, check its outputs against the "
                                          "reference and print the report as JSON; exit code 0 only if it passed");
  struct Args {
    std::string seed, patch, cache;
    std::vector<std::string> workloads = {"train"};
    unsigned block = 0;
    std::vector<std::string> options;
    int device = 0;
    std::uint64_t data_seed = 0;
    long timeout_ms = 10000;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu + spec.json); or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_option("--patch", a->patch, "patch file (default: the seed itself)");
  cmd->add_option("--workload", a->workloads,
                  "train, train:N (a training check), validate:N, or all (every one); repeat for more")
      ->capture_default_str();
  cmd->add_option("--block", a->block, "block size (default: the spec's)");
  cmd->add_option("--option", a->options, "an NVRTC option of the tuning; repeat for more (--option=--use_fast_math)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--device", a->device, "CUDA device")->capture_default_str();
  cmd->add_option("--data-seed", a->data_seed, "generator seed (validate: added to the spec's)")->capture_default_str();
  cmd->add_option("--cache", a->cache, "cache folder (compiles, references); none when not given");
  cmd->add_option("--timeout-ms", a->timeout_ms, "longest a launch may run")->capture_default_str();
  cmd->callback([a] {
    const Seed seed = load_seed(a->seed);
    const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
    grammar::Patch patch;
    if (!a->patch.empty()) patch = read_patch_for(seed, a->patch);
    // `all`: the training workloads, then the held-out ones.
    std::vector<std::string> workloads;
    for (const std::string& w : a->workloads) {
      if (w != "all") {
        workloads.push_back(w);
        continue;
      }
      for (const std::string& each : spec.every_workload()) workloads.push_back(each);
    }
    // A name no workload has: an error before the GPU is touched.
    for (const std::string& w : workloads) spec.workload(w);
    const Tuning tuning{a->block ? a->block : spec.default_block_size, a->options};
    const std::optional<std::filesystem::path> cache =
        a->cache.empty() ? std::nullopt : std::optional<std::filesystem::path>(std::filesystem::absolute(a->cache));

    fitness::GpuRunner runner(a->device);
    runner.set_kernel_timeout(std::chrono::milliseconds(a->timeout_ms));
    use_seed_as_reference(seed, spec, a->device, cache);
    BuiltVariant built;
    try {
      built = compile_variant(seed, patch, tuning, runner.arch(), cache);
    } catch (const grammar::PatchError& e) {
      throw std::runtime_error(a->patch + ": " + e.what());
    }
    const fitness::CompileResult& binary = built.binary;
    if (!binary.ok) throw std::runtime_error("check: the variant does not compile: " + binary.error);
    fitness::LoadResult loaded = runner.load(binary.cubin, spec.entry);
    nlohmann::json reports = nlohmann::json::array();
    bool passed = true;
    for (const std::string& workload : workloads) {
      fitness::PreparedWorkload work = fitness::prepare_workload(
          spec, workload, a->data_seed,
          cache ? std::optional<std::filesystem::path>(*cache / "reference") : std::nullopt, tuning.block_size);
      fitness::set_launch_geometry(work.plan, spec, work.variables, tuning.block_size, built.launch);
      fitness::CheckReport report;
      if (!loaded.ok()) {
        report.status = loaded.status;
        report.message = loaded.message;
      } else {
        report = runner.run_checked(*loaded.kernel, work.plan, work.expected, work.tolerance);
      }
      nlohmann::json out = {{"seed", seed.dir.string()},
                            {"patch", grammar::to_string(patch)},
                            {"workload", workload},
                            {"tuning", to_json(tuning)},
                            {"device", runner.device_name()}};
      out.update(check_report_fields(report));
      passed = passed && report.ok();
      // One workload: its report as it always was; several: each as it is
      // checked, so that a later one that hangs leaves the earlier ones shown.
      if (workloads.size() == 1) std::cout << out.dump(2) << std::endl;
      else std::cout << (reports.empty() ? "[\n" : ",\n") << out.dump(2) << std::flush;
      reports.push_back(std::move(out));
      // After a lost context the runner cannot be torn down cleanly, nor run
      // the workloads left: leave now.
      if (!runner.usable()) {
        if (workloads.size() > 1) std::cout << "\n]" << std::endl;
        std::cerr << "gi check: the CUDA context was lost on workload " << workload
                  << "; the workloads after it were not run" << std::endl;
        std::_Exit(1);
      }
    }
    if (workloads.size() > 1) std::cout << "\n]" << std::endl;
    if (!passed) throw CLI::RuntimeError(1);
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("check", gi::cli::add_check)
