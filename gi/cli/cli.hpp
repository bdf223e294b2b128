#pragma once
// Each `gi` sub-command lives in its own gi/cli/cli_<name>.cpp and registers
// itself on the root CLI11 app through one of these functions.
#include <CLI/CLI.hpp>

namespace gi::cli {
void register_grammar(CLI::App& app);
void register_apply(CLI::App& app);
void register_mutants(CLI::App& app);
void register_doctor(CLI::App& app);
void register_worker(CLI::App& app);
void register_evolve(CLI::App& app);
void register_check(CLI::App& app);
void register_bench(CLI::App& app);
void register_carry_over(CLI::App& app);
void register_list(CLI::App& app);
void register_init(CLI::App& app);
void register_verify(CLI::App& app);
void register_coverage(CLI::App& app);
void register_nvrtc(CLI::App& app);
void register_families(CLI::App& app);
void register_emulate(CLI::App& app);
void register_switches(CLI::App& app);
void register_evolve_all(CLI::App& app);
void register_report(CLI::App& app);
void register_ablate(CLI::App& app);
void register_make_pair(CLI::App& app);  // gi/cli/cli_register_data.cpp
void register_accuracy(CLI::App& app);   // gi/cli/cli_register_data.cpp
void register_register(CLI::App& app);
}  // namespace gi::cli
