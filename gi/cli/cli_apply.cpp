// `gi apply SEED_DIR PATCH_FILE [--diff] [--raw]`: the patched source as it
// is published (switches resolved: no dead path), or its diff.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/seed/seed.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/unified_diff.hpp"

namespace gi::cli {

void add_apply(CLI::App& app) {
  auto* cmd = app.add_subcommand("apply", "Apply a patch to a seed and print the patched source (or a unified diff)");
  struct Args {
    std::string seed, patch;
    bool diff = false, raw = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", args->seed, "seed folder (holding kernel.cu) or a .cu file; or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_option("PATCH_FILE", args->patch, "patch file: edits separated by spaces ('-' reads standard input)")
      ->required();
  cmd->add_flag("--diff", args->diff,
                "print a unified diff that `patch -p1` applies from the current directory (for a seed with switches: "
                "against its plain path, named plain.cu)");
  cmd->add_flag("--raw", args->raw,
                "keep the seed's switches (every path, #if lines included) instead of resolving them; with --diff, "
                "a diff against kernel.cu itself");
  cmd->callback([args] {
    const Seed seed = load_seed(args->seed);
    std::string text;
    if (args->patch == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      text = read_text_file(args->patch);
    }
    const grammar::Patch patch = parse_patch_for(seed, text, args->patch);
    try {
      if (args->raw) {
        if (args->diff)
          std::cout << grammar::patch_diff(seed.grammar, patch, seed.display_path, seed.context);
        else
          std::cout << grammar::apply_patch(seed.grammar, patch, seed.context);
        return;
      }
      const std::string published = variant_source(seed, patch).source;
      if (!args->diff) {
        std::cout << published;
        return;
      }
      const std::string path = seed.context.switches.empty() ? seed.display_path : "plain.cu";
      std::cout << grammar::unified_diff(variant_source(seed, grammar::Patch{}).source, published, "a/" + path,
                                         "b/" + path);
    } catch (const grammar::PatchError& e) {
      throw std::runtime_error(args->patch + ": " + e.what());
    }
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("apply", gi::cli::add_apply)
