// `gi commands [--markdown]`: every command with its one-line description,
// or (--markdown) every command's --help as one page, docs/commands.md.
#include <iostream>

#include "gi/cli/command_registry.hpp"

namespace gi::cli {

void add_commands(CLI::App& app) {
  auto* cmd = app.add_subcommand("commands", "List every command with its description; --markdown: every command's "
                                             "--help as one markdown page (docs/commands.md)");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown, "print the commands page (docs/commands.md) instead of the list");
  cmd->callback([cmd, markdown] {
    CLI::App& root = *cmd->get_parent();
    if (*markdown) {
      std::cout << commands_markdown(root);
      return;
    }
    for (const std::string& name : command_names())
      std::cout << "gi " << name << "\n    " << root.get_subcommand(name)->get_description() << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("commands", gi::cli::add_commands)
