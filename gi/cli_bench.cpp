// `gi bench SEED_DIR [--patch P] [--block B] [--rounds N] [--json]`: the
// interleaved seed-versus-variant measurement on the training workload (with
// no --patch, the seed against itself: the noise floor of the ratio), and
// each kernel's fraction of the memory-bandwidth floor.
#include <iostream>

#include "fitness/kernel_spec.hpp"
#include "gi/cli.hpp"
#include "gi/comparison.hpp"

namespace gi::cli {

void register_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Time a seed against a patched variant interleaved (A B A B) on the "
                                          "training workload; print medians, speed-up and memory-floor fractions");
  struct Args {
    std::string seed, patch, cache = ".gi-cache";
    unsigned block = 0, seed_block = 0;
    std::vector<std::string> options, seed_options;
    int rounds = 30, device = 0;
    std::uint64_t data_seed = 1;
    double bandwidth_tb_s = 0;
    bool json = false, no_cache = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu + spec.json)")->required();
  cmd->add_option("--patch", a->patch, "patch file of the variant (default: the seed itself)");
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
  cmd->callback([a] {
    if (a->rounds < 1) throw std::runtime_error("bench: --rounds must be at least 1");
    const Seed seed = load_seed(a->seed);
    const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
    grammar::Patch patch;
    if (!a->patch.empty()) patch = grammar::parse_patch(read_text_file(a->patch), a->patch);
    const Tuning seed_tuning{a->seed_block ? a->seed_block : spec.default_block_size, a->seed_options};
    const Tuning variant_tuning{a->block ? a->block : seed_tuning.block_size, a->options};
    ComparisonOptions o;
    o.device = a->device;
    o.rounds = a->rounds;
    o.data_seed = a->data_seed;
    if (!a->no_cache) o.cache_dir = std::filesystem::absolute(a->cache);
    if (a->bandwidth_tb_s > 0) o.bandwidth_bytes_per_s = a->bandwidth_tb_s * 1e12;
    const ComparisonResult r = compare(seed, spec, patch, seed_tuning, variant_tuning, o);
    if (a->json) {
      std::cout << r.to_json().dump(2) << std::endl;
    } else {
      std::cout << "gi bench " << seed.dir.string() << (a->patch.empty() ? " (seed vs itself)" : " vs " + a->patch)
                << "\n"
                << format_comparison(r);
    }
  });
}

}  // namespace gi::cli
