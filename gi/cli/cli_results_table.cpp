// `gi results-table evolved/<gpu-slug>`: the GPU folder's README.md table
// written again from its kernel folders' result.json files. For results
// published elsewhere (a device call's --evolved-dir under runs/) and copied
// in kernel folder by kernel folder: the run's own README holds only its own
// kernels, and the table is over every folder there.
#include <filesystem>
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/publish/results_writer.hpp"

namespace gi::cli {

void add_results_table(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "results-table",
      "Write a GPU folder's README.md table (evolved/<gpu>) again from the result.json of every kernel folder in it");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("GPU_DIR", *dir, "the GPU folder, e.g. evolved/nvidia-h200")->required();
  cmd->callback([dir] {
    // `evolved/nvidia-h200/` (as a shell completes it) names the same folder:
    // its name is the slug the table is titled with.
    std::filesystem::path gpu_dir(*dir);
    if (gpu_dir.filename().empty()) gpu_dir = gpu_dir.parent_path();
    if (!std::filesystem::is_directory(gpu_dir)) throw std::runtime_error(*dir + ": no such folder");
    write_results_readme(gpu_dir);
    std::cout << "wrote " << (gpu_dir / "README.md").string() << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("results-table", gi::cli::add_results_table)
