// `gi switches SEED_DIR [--json]`: every switch setting the seed's spec
// allows (gi/seed/switch_settings.hpp), each as the define patch that selects it:
// what `gi verify` checks path by path and what evolution's switch baseline
// measures, for scripts that time each path (`gi bench --patch`).
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/seed/seed.hpp"
#include "gi/seed/switch_settings.hpp"

namespace gi::cli {

void add_switches(CLI::App& app) {
  auto* cmd = app.add_subcommand("switches", "List the switch settings a seed allows, each with the define patch "
                                             "that selects it (the seed's own first)");
  struct Args {
    std::string seed;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu and its spec.json); or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_flag("--json", a->json, "print JSON");
  cmd->callback([a] {
    const Seed seed = load_seed(a->seed);
    nlohmann::json out = nlohmann::json::array();
    for (const SwitchSetting& s : switch_settings(seed))
      out.push_back({{"setting", s.name.empty() ? "default" : s.name}, {"patch", grammar::to_string(s.patch)}});
    if (a->json) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    for (const auto& row : out)
      std::cout << row["setting"].get<std::string>() << "\t" << row["patch"].get<std::string>() << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("switches", gi::cli::add_switches)
