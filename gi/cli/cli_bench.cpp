// `gi bench SEED_DIR [--patch P] [--kernel K.cu] [--block B] [--rounds N] [--json]`: the
// interleaved seed-versus-variant measurement on the training workload (with
// no --patch, the seed against itself: the noise floor of the ratio), and
// each kernel's fraction of the memory-bandwidth floor.
// `gi bench SEED_DIR --switches [--blocks 64,128,...]`: every switch setting
// the spec allows at every listed block size against the seed, round-robin
// in one process on one prepared workload (a survey of the seed's paths).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/publish/comparison.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/seed/switch_settings.hpp"

namespace gi::cli {

namespace {

// Both kernels run in this process, and a kernel that never ends cannot be
// interrupted from it: an alarm ends the process with a message instead of
// leaving it hanging (only async-signal-safe calls here).
void give_up_after_alarm(int) {
  static const char message[] =
      "gi: error: bench: no result within --timeout seconds; a kernel may hang (deadlock or endless loop)\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(124);
}

// Every allowed switch setting at every block size against the seed.
void survey_switches(const Seed& seed, const fitness::KernelSpec& spec, const Tuning& seed_tuning,
                     const std::vector<unsigned>& blocks, const std::vector<std::string>& options,
                     const ComparisonOptions& o, bool json) {
  std::vector<ComparedVariant> variants;
  std::vector<std::string> names;
  for (const SwitchSetting& s : switch_settings(seed))
    for (unsigned block : blocks) {
      variants.push_back({&seed, s.patch, Tuning{block, options}});
      names.push_back(s.name.empty() ? "default" : s.name);
    }
  const std::vector<ComparisonOutcome> outcomes = compare_many(seed, grammar::Patch{}, spec, seed_tuning, variants, o);
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    nlohmann::json row = {{"setting", names[i]}, {"patch", grammar::to_string(variants[i].patch)},
                          {"tuning", to_json(variants[i].tuning)}};
    if (outcomes[i].error.empty())
      row["comparison"] = outcomes[i].result.to_json();
    else
      row["error"] = outcomes[i].error;
    rows.push_back(row);
  }
  if (json) {
    std::cout << rows.dump(2) << std::endl;
    return;
  }
  std::printf("switch settings of %s against the seed (%s), %d rounds\n", seed.dir.string().c_str(),
              ("block " + std::to_string(seed_tuning.block_size)).c_str(), o.rounds);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].error.empty()) {
      std::printf("  %-44s block %4u  FAILED: %s\n", names[i].c_str(), variants[i].tuning.block_size,
                  outcomes[i].error.c_str());
      continue;
    }
    const ComparisonResult& r = outcomes[i].result;
    std::printf("  %-44s block %4u  %9.4f ms (seed %9.4f)  %7.3fx [%.3f]  floor %5.1f%%\n", names[i].c_str(),
                variants[i].tuning.block_size, r.evolved.median_ms, r.seed.median_ms, r.speedup, r.speedup_ci_low,
                100 * r.evolved_floor_fraction);
  }
}

}  // namespace

void add_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Time a seed against a patched variant interleaved (A B A B) on the "
                                          "training workload; print medians, speed-up and memory-floor fractions");
  struct Args {
    std::string seed, patch, kernel, cache = ".gi-cache";
    unsigned block = 0, seed_block = 0;
    std::vector<std::string> options, seed_options;
    int rounds = 30, device = 0;
    unsigned timeout_s = 600;
    std::uint64_t data_seed = 1;
    double bandwidth_tb_s = 0;
    bool json = false, no_cache = false, switches = false;
    std::vector<unsigned> blocks;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu + spec.json); or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_option("--patch", a->patch, "patch file of the variant (default: the seed itself)");
  cmd->add_option("--kernel", a->kernel,
                  "the variant's source: another .cu with the seed's entry and parameters, e.g. a hand-written "
                  "kernel (default: the seed's kernel.cu); --patch applies to it");
  cmd->add_option("--block", a->block, "the variant's block size (default: the seed's)");
  cmd->add_option("--option", a->options, "an NVRTC option of the variant; repeat for more (--option=--use_fast_math)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed-block", a->seed_block, "the seed's block size (default: the spec's)");
  cmd->add_option("--seed-option", a->seed_options, "an NVRTC option of the seed; repeat for more")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--rounds", a->rounds, "A B rounds")->capture_default_str();
  cmd->add_option("--device", a->device, "CUDA device")->capture_default_str();
  cmd->add_option("--data-seed", a->data_seed, "generator seed of the training workload")->capture_default_str();
  cmd->add_option("--cache", a->cache, "cache folder (compiles, references)")->capture_default_str();
  cmd->add_flag("--no-cache", a->no_cache, "use no cache folder");
  cmd->add_option("--bandwidth", a->bandwidth_tb_s, "copy bandwidth in TB/s (default: measured)");
  cmd->add_flag("--json", a->json, "print JSON");
  cmd->add_flag("--switches", a->switches,
                "time every switch setting the spec allows (each at every --blocks size) against the seed, "
                "round-robin in one process");
  cmd->add_option("--blocks", a->blocks, "with --switches: the block sizes of each setting (default: the seed's)")
      ->delimiter(',');
  cmd->add_option("--timeout", a->timeout_s, "give up (exit 124) after this many seconds: a hanging kernel cannot be "
                                             "interrupted otherwise")
      ->capture_default_str();
  cmd->callback([a] {
    if (a->rounds < 1) throw std::runtime_error("bench: --rounds must be at least 1");
    if (a->timeout_s > 0) {
      ::signal(SIGALRM, give_up_after_alarm);
      ::alarm(a->timeout_s);
    }
    const Seed seed = load_seed(a->seed);
    const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
    const Seed variant = a->kernel.empty() ? seed : load_seed(a->kernel);
    grammar::Patch patch;
    if (!a->patch.empty()) patch = read_patch_for(seed, a->patch);
    const Tuning seed_tuning{a->seed_block ? a->seed_block : spec.default_block_size, a->seed_options};
    const Tuning variant_tuning{a->block ? a->block : seed_tuning.block_size, a->options};
    ComparisonOptions o;
    o.device = a->device;
    o.rounds = a->rounds;
    o.data_seed = a->data_seed;
    if (!a->no_cache) o.cache_dir = std::filesystem::absolute(a->cache);
    if (a->bandwidth_tb_s > 0) o.bandwidth_bytes_per_s = a->bandwidth_tb_s * 1e12;
    if (a->switches) {
      if (!a->patch.empty() || !a->kernel.empty())
        throw std::runtime_error("bench: --switches times the seed's own switch settings; leave out --patch and --kernel");
      survey_switches(seed, spec, seed_tuning, a->blocks.empty() ? std::vector<unsigned>{seed_tuning.block_size} : a->blocks,
                      a->options, o, a->json);
      return;
    }
    const ComparisonResult r = compare(seed, variant, spec, patch, seed_tuning, variant_tuning, o);
    if (a->json) {
      std::cout << r.to_json().dump(2) << std::endl;
    } else {
      std::string what = a->kernel.empty() ? "" : a->kernel;
      if (!a->patch.empty()) what += (what.empty() ? "" : " + ") + a->patch;
      std::cout << "gi bench " << seed.dir.string() << (what.empty() ? " (seed vs itself)" : " vs " + what) << "\n"
                << format_comparison(r);
    }
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("bench", gi::cli::add_bench)
