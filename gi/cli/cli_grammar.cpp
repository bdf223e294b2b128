// `gi grammar FILE.cu [--json]`: print a kernel's typed grammar.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/grammar_text.hpp"

namespace gi::cli {

void add_grammar(CLI::App& app) {
  auto* cmd = app.add_subcommand("grammar", "Print the typed BNF grammar of a CUDA kernel file (or seed folder)");
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *file, "kernel .cu file or seed folder; or a library seed: family/kernel")
      ->transform(library_seed())->required();
  cmd->add_flag("--json", *json, "print JSON (rules, kinds, identifiers, visible declarations) instead of BNF");
  cmd->callback([file, json] {
    const Seed seed = load_seed(*file);
    // Kernel files need not be UTF-8 (a Latin-1 comment compiles fine), but
    // JSON text must be: bad bytes print as U+FFFD instead of failing the
    // command (found by fuzz/fuzz_grammar).
    if (*json)
      std::cout << grammar::to_json(seed.grammar).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    else
      std::cout << grammar::to_bnf(seed.grammar);
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("grammar", gi::cli::add_grammar)
