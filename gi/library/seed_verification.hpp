#pragma once
// `gi verify`: every seed, as written, on the GPU against its CPU reference
// on every training workload and every held-out workload, plus the run-to-run
// spread of repeated runs (non-zero only for kernels with float atomics), and
// the branch coverage of its training set (gi/library/seed_coverage.hpp): a seed
// whose training set leaves a branch direction untaken that its spec does
// not exempt fails. One JSON file per kernel, so an interrupted verification
// resumes, and a README table over all of them.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fitness/gpu/gpu_runner.hpp"

namespace gi {

struct VerifyOptions {
  int runs = 5;  // repeated training runs for the spread
  std::optional<std::filesystem::path> cache;
  long timeout_ms = 20000;
};

// Verifies the seed in `dir`; never throws for a failing kernel (the JSON
// says what failed: "passed", per workload "status", "coverage" with
// "coverage_failure" naming the untaken directions), only for a seed that
// cannot be loaded.
nlohmann::json verify_seed(fitness::GpuRunner& runner, const std::filesystem::path& dir, const VerifyOptions& options);

// Markdown table of verify_seed results.
std::string verification_readme(const nlohmann::json& versions, const std::vector<nlohmann::json>& results);

}  // namespace gi
