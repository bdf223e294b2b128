// `gi coverage SEED_DIR... [--json]`: which branch directions of a seed its
// training set takes, per direction and per training workload, with the
// spec's exemptions: what a developer fixing a seed's training set needs
// (gi verify only names the untaken directions). Exits 1 when a seed's
// coverage fails.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/library/seed_coverage.hpp"

namespace gi::cli {

void add_coverage(CLI::App& app) {
  auto* cmd = app.add_subcommand("coverage", "Run seeds instrumented with a counter per branch direction on every "
                                             "training workload and print which directions each workload takes");
  struct Args {
    std::vector<std::string> seeds;
    std::string cache = ".gi-cache";
    int device = 0;
    bool json = false;
    long timeout_ms = 20000;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seeds, "seed folders (kernel.cu + spec.json); or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_flag("--json", a->json, "one JSON array: per seed every site with its counts per workload");
  cmd->add_option("--cache", a->cache, "cache folder (compiles, references); empty for none")->capture_default_str();
  cmd->add_option("--device", a->device, "CUDA device")->capture_default_str();
  cmd->add_option("--timeout-ms", a->timeout_ms, "longest a launch may run")->capture_default_str();
  cmd->callback([a] {
    // Seeds first: a mistyped folder is reported on a machine without a GPU too.
    std::vector<Seed> seeds;
    std::vector<fitness::KernelSpec> specs;
    for (const std::string& dir : a->seeds) {
      seeds.push_back(load_seed(dir));
      specs.push_back(fitness::load_kernel_spec(seeds.back().dir));
    }
    const std::optional<std::filesystem::path> cache =
        a->cache.empty() ? std::nullopt : std::optional<std::filesystem::path>(std::filesystem::absolute(a->cache));
    fitness::GpuRunner runner(a->device);
    runner.set_kernel_timeout(std::chrono::milliseconds(a->timeout_ms));
    nlohmann::json all = nlohmann::json::array();
    bool passed = true;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      const fitness::KernelSpec& spec = specs[i];
      const Tuning tuning{spec.default_block_size, {}};
      const SeedCoverage c = measure_seed_coverage(runner, seeds[i], spec, tuning, cache);
      passed = passed && c.passed();
      if (a->json) {
        all.push_back({{"seed", a->seeds[i]}, {"entry", spec.entry}, {"block_size", tuning.block_size},
                       {"coverage", to_json(c)}});
      } else {
        std::cout << a->seeds[i] << " (" << spec.entry << ", block size " << tuning.block_size << ")\n";
        if (c.report) std::cout << fitness::coverage_table(*c.report);
        if (!c.error.empty()) std::cout << "error: " << c.error << "\n";
        std::cout << std::endl;
      }
      if (!runner.usable()) throw std::runtime_error("the CUDA context was lost after " + a->seeds[i]);
    }
    if (a->json) std::cout << all.dump(2) << std::endl;
    if (!passed) throw CLI::RuntimeError(1);
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("coverage", gi::cli::add_coverage)
