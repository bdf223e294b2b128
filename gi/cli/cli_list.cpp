// `gi list [SEEDS_ROOT] [--json] [--bandwidth-gbs B]`: every kernel of the
// library with its family, work item, training size and memory floor.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/library/library_root.hpp"
#include "gi/library/seed_library.hpp"

namespace gi::cli {

void add_list(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List every seed kernel: family, work item, training size and memory floor");
  struct Args {
    std::string root, cache = ".gi-cache";
    bool json = false;
    double bandwidth_gbs = 4200;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEEDS_ROOT", a->root, "folder holding the seed folders (default: the library's seeds/, see gi doctor)");
  cmd->add_option("--cache", a->cache, "cache folder (training sizes); '' for none")->capture_default_str();
  cmd->add_option("--bandwidth-gbs", a->bandwidth_gbs,
                  "memory bandwidth for the floor, GB/s (default: device-to-device copy measured on an H200)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "one JSON array instead of the table");
  cmd->callback([a] {
    std::optional<std::filesystem::path> cache;
    if (!a->cache.empty()) cache = std::filesystem::absolute(a->cache);
    std::vector<LibraryEntry> entries;
    for (const auto& dir : find_seed_dirs(a->root.empty() ? library().seeds() : std::filesystem::path(a->root))) {
      try {
        entries.push_back(describe_seed(dir, cache));
      } catch (const std::exception& e) {
        throw std::runtime_error(dir.string() + ": " + e.what());
      }
    }
    if (a->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& e : entries) out.push_back(e.to_json(a->bandwidth_gbs));
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << library_table(entries, a->bandwidth_gbs);
    }
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("list", gi::cli::add_list)
