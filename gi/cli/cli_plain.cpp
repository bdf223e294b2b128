// `gi plain SEED_DIR OUT_DIR`: the seed's plain form (gi/seed/plain_seed.hpp)
// as a seed folder of its own, for studies of what gi finds without the
// hand-written switch paths (issue 28's transform_only cell).
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/seed/plain_seed.hpp"
#include "gi/seed/seed.hpp"

namespace gi::cli {

void add_plain(CLI::App& app) {
  auto* cmd = app.add_subcommand("plain", "Write a seed's plain form: kernel.cu at its default switch setting with the "
                                          "switch paths removed, spec.json without switches, as OUT_DIR/<family>/<kernel>");
  struct Args {
    std::string seed, out;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu and its spec.json); or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_option("OUT_DIR", a->out, "where the plain seed's family folder goes")->required();
  cmd->callback([a] { std::cout << write_plain_seed(load_seed(a->seed), a->out).string() << "\n"; });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("plain", gi::cli::add_plain)
