// The `gi` command line: genetic improvement of CUDA registration kernels.
#include <exception>
#include <iostream>

#include "gi/cli/cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gi: genetic improvement of CUDA kernels for 3D image registration"};
  app.require_subcommand(1);
  gi::cli::register_grammar(app);
  gi::cli::register_apply(app);
  gi::cli::register_mutants(app);
  gi::cli::register_doctor(app);
  gi::cli::register_worker(app);
  gi::cli::register_evolve(app);
  gi::cli::register_check(app);
  gi::cli::register_bench(app);
  gi::cli::register_carry_over(app);
  gi::cli::register_list(app);
  gi::cli::register_init(app);
  gi::cli::register_verify(app);
  gi::cli::register_coverage(app);
  gi::cli::register_nvrtc(app);
  gi::cli::register_families(app);
  gi::cli::register_emulate(app);
  gi::cli::register_switches(app);
  gi::cli::register_evolve_all(app);
  gi::cli::register_report(app);
  gi::cli::register_ablate(app);
  gi::cli::register_make_pair(app);
  gi::cli::register_accuracy(app);
  gi::cli::register_register(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    // Bad input is reported, never a crash: every error names what and where.
    std::cerr << "gi: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
