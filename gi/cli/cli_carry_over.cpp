// `gi carry-over evolved/<this-gpu> evolved/<other-gpu>`: on this GPU, each
// kernel published for both against this GPU's tuned seed, this GPU's
// evolved kernel beside the other's (gi/publish/carry_over.hpp). Writes
// carry-over-from-<other>.md and .json into the first folder (or --out-dir).
#include <iostream>

#include "fitness/process/atomic_file.hpp"
#include "gi/publish/carry_over.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/library/library_root.hpp"
#include "gi/publish/versions.hpp"

namespace gi::cli {

void add_carry_over(CLI::App& app) {
  auto* cmd = app.add_subcommand("carry-over", "Time another GPU's evolved kernels on this GPU beside this GPU's "
                                               "own, each against this GPU's tuned seed");
  struct Args {
    std::string here, from, kernels = "*", seeds, cache = ".gi-cache", out_dir;
    int rounds = 30, device = 0;
    std::uint64_t data_seed = 1;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("HERE", a->here, "evolved/<gpu> of the GPU this runs on")->required();
  cmd->add_option("FROM", a->from, "evolved/<gpu> of the other GPU model")->required();
  cmd->add_option("--kernels", a->kernels, "comma-separated globs over family/kernel")->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "the seed library (default: the library's seeds/, see gi doctor)");
  cmd->add_option("--rounds", a->rounds, "rounds (A, own, other in each)")->capture_default_str();
  cmd->add_option("--device", a->device, "CUDA device")->capture_default_str();
  cmd->add_option("--data-seed", a->data_seed, "generator seed of the training workload")->capture_default_str();
  cmd->add_option("--cache", a->cache, "cache folder (compiles, references)")->capture_default_str();
  cmd->add_option("--out-dir", a->out_dir, "where the table and record go (default: HERE)");
  cmd->callback([a] {
    namespace fs = std::filesystem;
    const std::string here = fs::path(a->here).lexically_normal().filename().string();
    const std::string from = fs::path(a->from).lexically_normal().filename().string();
    const std::vector<CarryOverPair> pairs = carry_over_pairs(a->here, a->from, a->seeds.empty() ? library().seeds() : fs::path(a->seeds), a->kernels);
    if (pairs.empty()) throw std::runtime_error("carry-over: no kernel is published in both " + a->here + " and " + a->from);
    ComparisonOptions o;
    o.device = a->device;
    o.rounds = a->rounds;
    o.data_seed = a->data_seed;
    o.cache_dir = fs::path(a->cache);
    const std::vector<CarryOverRow> rows =
        measure_carry_over(pairs, o, [](const std::string& s) { std::cerr << s << std::endl; });
    const fs::path out = a->out_dir.empty() ? fs::path(a->here) : fs::path(a->out_dir);
    fs::create_directories(out);
    const nlohmann::json versions = versions_json(a->device);
    const std::string table = carry_over_markdown(here, from, rows, versions);
    fitness::write_file_atomically(out / ("carry-over-from-" + from + ".md"), table);
    fitness::write_file_atomically(out / ("carry-over-from-" + from + ".json"),
                                   carry_over_json(here, from, rows, versions).dump(2) + "\n");
    std::cout << table;
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("carry-over", gi::cli::add_carry_over)
