// The registry of `gi` sub-commands (gi/cli/command_registry.hpp) and the
// root app built from it.
#include "gi/cli/command_registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <utility>

namespace gi::cli {

namespace {

// A function-local static: commands register from static initialisers of
// other files, in any order.
std::vector<std::pair<std::string, AddCommand>>& registry() {
  static std::vector<std::pair<std::string, AddCommand>> commands;
  return commands;
}

}  // namespace

bool register_command(const std::string& name, AddCommand add) {
  auto& r = registry();
  if (std::any_of(r.begin(), r.end(), [&](const auto& c) { return c.first == name; })) {
    // A start-up error of the build, not of any input: say it and stop.
    std::fprintf(stderr, "gi: two commands are named '%s'\n", name.c_str());
    std::abort();
  }
  r.emplace_back(name, add);
  std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : registry()) names.push_back(c.first);
  return names;
}

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>("gi: genetic improvement of CUDA kernels for 3D image registration", "gi");
  app->require_subcommand(1);
  for (const auto& [name, add] : registry()) {
    add(*app);
    // A command's file adds the sub-command its registration names: a
    // mismatch would give help and docs a name that does not run.
    const auto subs = app->get_subcommands([&](CLI::App* sub) { return sub->get_name() == name; });
    if (subs.empty()) {
      std::fprintf(stderr, "gi: the command registered as '%s' added no sub-command of that name\n", name.c_str());
      std::abort();
    }
  }
  return app;
}

int run_command_line(int argc, char** argv) {
  const auto app = make_app();
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app->exit(e);
  } catch (const std::exception& e) {
    // Bad input is reported, never a crash: every error names what and where.
    std::cerr << "gi: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

std::string commands_markdown(CLI::App& root) {
  std::ostringstream out;
  out << "# gi commands\n\n"
      << "Generated from every command's `--help` by `gi commands --markdown > docs/commands.md`; a test fails\n"
      << "when this page is out of step with the commands (do not edit by hand).\n\n";
  for (const std::string& name : command_names()) out << "- [`gi " << name << "`](#gi-" << name << ")\n";
  // The formatter itself: App::help() would show the command being run
  // (`gi commands`) in place of the root.
  auto help = [](CLI::App* app, const std::string& usage_name) {
    return app->get_formatter()->make_help(app, usage_name, CLI::AppFormatMode::Normal);
  };
  out << "\n## gi\n\n```\n" << help(&root, "gi") << "```\n";
  for (const std::string& name : command_names())
    out << "\n## gi " << name << "\n\n```\n" << help(root.get_subcommand(name), "gi " + name) << "```\n";
  return out.str();
}

}  // namespace gi::cli
