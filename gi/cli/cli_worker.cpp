// `gi worker [--device N]`: the isolated evaluation process. The search
// starts it through fitness::WorkerProcess; it is not meant to be run by hand.
#include "fitness/gpu/worker_loop.hpp"
#include "fitness/process/worker.hpp"
#include "gi/cli/command_registry.hpp"

namespace gi::cli {

void add_worker(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "Evaluation worker process (one JSON request per line on stdin; "
                                           "started by `gi evolve`, not by hand)");
  auto device = std::make_shared<int>(0);
  cmd->add_option("--device", *device, "CUDA device index")->capture_default_str();
  cmd->callback([device] { std::exit(fitness::run_worker_stdio(*device)); });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("worker", gi::cli::add_worker)
