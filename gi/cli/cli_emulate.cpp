// `gi emulate SEED_DIR [--patch FILE] [--define NAME=VALUE ...] [--workload W ...]
//  [--all-settings] [--block B] [--data-seed S] [--coverage] [--cache DIR]`:
// runs a (patched) seed on the CPU emulator (fitness/emulation/cpu_emulator.hpp) on
// its small training workloads and checks every one against the reference
// as the GPU would (a seed that is its own reference is run unpatched on the
// emulator for it); prints one JSON report per workload (as `gi check` does)
// and, with --coverage, which branch directions the workloads take. Exits 1
// when a check failed. No GPU needed.
#include <chrono>
#include <iostream>

#include "fitness/check/coverage_report.hpp"
#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/cli/check_report_json.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/library/seed_coverage.hpp"
#include "gi/library/seed_emulation.hpp"
#include "gi/seed/switch_settings.hpp"

namespace gi::cli {

namespace {

grammar::Patch with_defines(grammar::Patch patch, const std::vector<std::string>& defines) {
  for (const std::string& d : defines) {
    const grammar::Patch one = grammar::parse_patch("define:" + d, "--define " + d);
    patch.edits.insert(patch.edits.end(), one.edits.begin(), one.edits.end());
  }
  return patch;
}

}  // namespace

void add_emulate(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "emulate",
      "Run a (patched) seed on the CPU emulator (no GPU: each CUDA thread a fiber, blocks in order, deterministic) "
      "on its training checks and check every output against the reference as `gi check` does; one JSON report "
      "per workload; exit code 0 only if all passed. Not a timing device. The large workloads (train, "
      "validate:N) work but are slow: seconds to minutes each, 100 to 10,000 times a GPU's time");
  struct Args {
    std::string seed, patch, cache = ".gi-cache";
    std::vector<std::string> defines, workloads;
    unsigned block = 0;
    std::uint64_t data_seed = 0;
    bool coverage = false, all_settings = false;
    long timeout_ms = 600000;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu + spec.json); or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_option("--patch", a->patch, "patch file (default: the seed itself)");
  cmd->add_option("--define", a->defines, "set a switch: NAME=VALUE (a define: edit added to the patch); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--workload", a->workloads,
                  "train:N (a training check), train or validate:N (large: slow on the CPU); repeatable. "
                  "Default: every train:N")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--all-settings", a->all_settings,
                "run every switch setting of the seed (spec.json switches), each with the patch");
  cmd->add_option("--block", a->block, "block size (default: the spec's)");
  cmd->add_option("--data-seed", a->data_seed, "generator seed (validate: added to the spec's)")->capture_default_str();
  cmd->add_flag("--coverage", a->coverage,
                "run the variant instrumented with a counter per branch direction and print which directions "
                "the workloads take (every switch setting, unless --patch or --define chooses one)");
  cmd->add_option("--cache", a->cache, "cache folder (emulator builds in emulator/, references in reference/); "
                                       "empty for none")
      ->capture_default_str();
  cmd->add_option("--timeout-ms", a->timeout_ms, "longest one emulated launch may run")->capture_default_str();
  cmd->callback([a] {
    const Seed seed = load_seed(a->seed);
    const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
    grammar::Patch patch;
    if (!a->patch.empty()) patch = read_patch_for(seed, a->patch);
    patch = with_defines(std::move(patch), a->defines);
    const unsigned block = a->block ? a->block : spec.default_block_size;
    const std::vector<std::string> workloads = a->workloads.empty() ? emulated_training_workloads(spec) : a->workloads;
    for (const std::string& w : workloads) (void)spec.workload(w);  // a mistyped workload fails before any run
    const std::optional<std::filesystem::path> cache =
        a->cache.empty() ? std::nullopt : std::optional<std::filesystem::path>(std::filesystem::absolute(a->cache));

    // Which variants: the patch, or every switch setting with it.
    const bool every_setting = a->all_settings || (a->coverage && a->patch.empty() && a->defines.empty());
    std::vector<SwitchSetting> settings;
    if (every_setting) {
      settings = switch_settings(seed);
      for (SwitchSetting& s : settings) s.patch.edits.insert(s.patch.edits.begin(), patch.edits.begin(), patch.edits.end());
    } else {
      settings.push_back(SwitchSetting{"", patch});
    }

    fitness::EmulatorOptions options;
    if (cache) options.cache_dir = *cache / "emulator";
    options.timeout = std::chrono::milliseconds(a->timeout_ms);
    const fitness::CpuEmulator emulator(options);
    use_emulated_seed_as_reference(emulator, seed, spec);
    const std::optional<std::filesystem::path> refs =
        cache ? std::optional<std::filesystem::path>(*cache / "reference") : std::nullopt;

    bool all_ok = true;
    std::vector<std::string> names;
    std::vector<std::vector<std::uint64_t>> counts;
    std::optional<fitness::BranchInstrumentation> instrumentation;
    std::vector<std::optional<fitness::PreparedWorkload>> prepared(workloads.size());
    for (const SwitchSetting& setting : settings) {
      const EmulatedVariant variant = build_emulated_variant(emulator, seed, spec, setting.patch, a->coverage);
      if (variant.instrumentation && !instrumentation) instrumentation = variant.instrumentation;
      for (std::size_t w = 0; w < workloads.size(); ++w) {
        if (!prepared[w]) prepared[w] = fitness::prepare_workload(spec, workloads[w], a->data_seed, refs, block);
        const auto start = std::chrono::steady_clock::now();
        const fitness::CountedRun run = emulate_workload(emulator, variant, spec, *prepared[w], block);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const fitness::CheckReport& report = run.check;
        all_ok = all_ok && report.ok();
        nlohmann::json out = {{"seed", seed.dir.string()},
                              {"patch", grammar::to_string(setting.patch)},
                              {"workload", workloads[w]},
                              {"tuning", {{"block_size", block}}},
                              {"device", fitness::kEmulatorDeviceName},
                              {"seconds", seconds}};
        out.update(check_report_fields(report));
        if (!setting.name.empty()) out["setting"] = setting.name;
        if (a->coverage) out["instrumented"] = true;
        std::cout << out.dump(2) << std::endl;
        if (a->coverage && variant.instrumentation) {
          names.push_back(coverage_workload_name(workloads[w], setting));
          counts.push_back(run.counts.empty() ? std::vector<std::uint64_t>(variant.instrumentation->counters(), 0)
                                              : run.counts);
        }
      }
    }
    if (a->coverage && instrumentation) {
      const fitness::CoverageReport report =
          fitness::coverage_report(instrumentation->sites, names, counts, spec.coverage_exempt, spec.display_path);
      std::cout << "\nbranch coverage of " << a->seed << " on the emulator (" << names.size()
                << " runs; a failed run counts nothing):\n"
                << fitness::coverage_table(report);
      std::cout << report.taken() << " of " << report.directions.size() << " directions taken, " << report.exempt()
                << " exempt, " << report.untaken().size() << " untaken by these workloads" << std::endl;
    }
    if (!all_ok) throw CLI::RuntimeError(1);
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("emulate", gi::cli::add_emulate)
