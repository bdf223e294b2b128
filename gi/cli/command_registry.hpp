#pragma once
// Every `gi` sub-command is one file, gi/cli/cli_<name>.cpp, that adds its
// CLI11 sub-command to the root app and registers itself with
// GI_REGISTER_COMMAND, as edit families and seeds do: adding a command is
// adding that file and its test (and regenerating docs/commands.md), never
// editing main.cpp. The cli files form the OBJECT library gi_cli, so every
// executable that links it keeps every registration.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gi::cli {

// Adds one sub-command (and its options and callback) to the root app.
using AddCommand = void (*)(CLI::App& root);

// Registration (static objects in gi/cli/cli_*.cpp). Names must be unique;
// a second command of one name aborts at start-up with a message.
bool register_command(const std::string& name, AddCommand add);

// Every registered command's name, in name order.
std::vector<std::string> command_names();

// The root `gi` app with every registered command, in name order.
std::unique_ptr<CLI::App> make_app();

// Parses argv and runs the chosen command; what main() returns. Bad input is
// reported ("gi: error: ...", exit 1), never a crash.
int run_command_line(int argc, char** argv);

// docs/commands.md: the root's and every command's --help, in name order,
// each as a markdown section (`gi commands --markdown` prints it).
std::string commands_markdown(CLI::App& root);

}  // namespace gi::cli

#define GI_COMMAND_CONCAT2(a, b) a##b
#define GI_COMMAND_CONCAT(a, b) GI_COMMAND_CONCAT2(a, b)
// In one gi/cli/cli_<name>.cpp, after the function that adds the command:
// GI_REGISTER_COMMAND("list", gi::cli::add_list)
#define GI_REGISTER_COMMAND(name, add)                                                \
  namespace {                                                                         \
  [[maybe_unused]] const bool GI_COMMAND_CONCAT(gi_command_registered_, __LINE__) =   \
      ::gi::cli::register_command(name, add);                                         \
  }
