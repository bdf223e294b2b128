// `gi nvrtc-serve`: a compile server for the compile pool
// (fitness/compile/compile_server.hpp): NVRTC calls on request, one JSON line each
// way over stdin/stdout, until stdin closes.
#include "fitness/compile/automatic_pch.hpp"
#include "fitness/compile/compile_server.hpp"
#include "fitness/process/json_line_server.hpp"
#include "gi/cli/command_registry.hpp"

namespace gi::cli {

void add_nvrtc(CLI::App& app) {
  auto* cmd = app.add_subcommand("nvrtc-serve", "Compile server of the compile pool (started by gi evolve and "
                                                "gi mutants; not meant to be run by hand)");
  auto pch_dir = std::make_shared<std::string>();
  cmd->add_option("--pch-dir", *pch_dir,
                  "keep NVRTC's automatic precompiled headers in this folder, for the compiles of sources that include "
                  "headers (fitness/compile/automatic_pch.hpp)");
  cmd->callback([pch_dir] {
    if (!pch_dir->empty()) fitness::use_automatic_pch(*pch_dir);
    std::exit(fitness::serve_on_stdio(fitness::run_compile_server_loop, "gi nvrtc-serve"));
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("nvrtc-serve", gi::cli::add_nvrtc)
