// `gi mutants SEED_DIR --count N`: compile-rate survey of random single edits.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/search/mutant_survey.hpp"

namespace gi::cli {

void add_mutants(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "mutants", "Make N random single-edit mutants of a seed (all edit families), compile them with NVRTC, "
                 "and print one JSON object: total, compiled, rate, per-edit-type counts and rates, seconds per variant");
  struct Args {
    std::string seed;
    SurveyConfig config;
    std::string families = "all";
    std::vector<std::string> constants;
    std::vector<std::filesystem::path> include_dirs;
    std::vector<std::string> nvrtc_options;
    std::vector<std::string> pre_includes;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", args->seed, "seed folder (holding kernel.cu) or a .cu file; or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_option("--count", args->config.count, "number of mutants")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--arch", args->config.arch, "NVRTC target: sm_XX gives a cubin, compute_XX PTX")->capture_default_str();
  cmd->add_option("--seed", args->config.seed, "random seed")->capture_default_str();
  cmd->add_option("--jobs", args->config.jobs, "parallel NVRTC compiles")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--cache", args->config.cache_dir, "compile cache folder (default: none, every variant compiles)");
  cmd->add_option("--families", args->families, "comma-separated edit families to draw from (ablation), or 'all'")
      ->capture_default_str();
  cmd->add_flag("--one-stage", [args](std::int64_t n) { args->config.two_stage = n == 0; },
                "compile straight to a cubin (default: PTX first, ptxas once per distinct PTX)");
  cmd->add_flag("--processes", [args](std::int64_t n) {
    if (n > 0) args->config.compile_servers = std::filesystem::read_symlink("/proc/self/exe").string();
  }, "make NVRTC calls on --jobs compile-server processes (`gi nvrtc-serve`) instead of threads");
  cmd->add_option("--include-dir", args->include_dirs,
                  "a folder the kernel's includes are found in, beside its own folder and spec.json's include_dirs "
                  "(repeatable)");
  cmd->add_option("--nvrtc-option", args->nvrtc_options,
                  "an NVRTC option as the user's build gives it, e.g. -DUSE_DOUBLE=0 (repeatable; after spec.json's "
                  "nvrtc_options)")
      ->allow_extra_args(false);
  cmd->add_option("--pre-include", args->pre_includes,
                  "a file the user's build includes before the kernel file (its folder or an include folder; "
                  "repeatable; after spec.json's pre_includes)");
  cmd->add_option("--const", args->constants, "NAME=VALUE for constant specialisation (default: the spec's training workload)");
  cmd->callback([args] {
    Seed seed = load_seed(args->seed);
    add_to_build(seed, args->include_dirs, args->nvrtc_options, args->pre_includes);
    SurveyConfig config = args->config;
    config.operators.enabled = parse_families(args->families);
    config.operators.context = seed.context;
    bool placeholder = false;
    config.operators.context.constants = mutant_constants(seed, &placeholder);
    for (const auto& kv : args->constants) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error("--const " + kv + ": expected NAME=VALUE");
      config.operators.context.constants[kv.substr(0, eq)] = kv.substr(eq + 1);
      placeholder = false;
    }
    const SurveyResult r = survey_mutants(seed, config);
    auto out = r.to_json();
    out["seed"] = seed.display_path;
    out["arch"] = config.arch;
    out["jobs"] = config.jobs;
    out["random_seed"] = config.seed;
    out["const_values"] = placeholder ? "placeholder 1 (compile check only)" : "workload";
    std::cout << out.dump(2) << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("mutants", gi::cli::add_mutants)
