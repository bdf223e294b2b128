// `gi apply SEED_DIR PATCH_FILE [--diff]`: the patched source, or its diff.
#include <iostream>

#include "gi/cli.hpp"
#include "gi/seed.hpp"
#include "grammar/patch_apply.hpp"

namespace gi::cli {

void register_apply(CLI::App& app) {
  auto* cmd = app.add_subcommand("apply", "Apply a patch to a seed and print the patched source (or a unified diff)");
  struct Args {
    std::string seed, patch;
    bool diff = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", args->seed, "seed folder (holding kernel.cu) or a .cu file")->required();
  cmd->add_option("PATCH_FILE", args->patch, "patch file: edits separated by spaces ('-' reads standard input)")
      ->required();
  cmd->add_flag("--diff", args->diff, "print a unified diff that `patch -p1` applies from the current directory");
  cmd->callback([args] {
    const Seed seed = load_seed(args->seed);
    std::string text;
    if (args->patch == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      text = read_text_file(args->patch);
    }
    const auto patch = grammar::parse_patch(text, args->patch);
    try {
      if (args->diff)
        std::cout << grammar::patch_diff(seed.grammar, patch, seed.display_path);
      else
        std::cout << grammar::apply_patch(seed.grammar, patch);
    } catch (const grammar::PatchError& e) {
      throw std::runtime_error(args->patch + ": " + e.what());
    }
  });
}

}  // namespace gi::cli
