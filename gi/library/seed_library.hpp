#pragma once
// The kernel library as a whole: every seed folder under seeds/, and what
// `gi list` prints about each (family, work item, training size, memory
// floor). The training workload's sizes come from running its generator
// (seconds for 217^3 data), so they are cached by the spec's training entry.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/workload/kernel_spec.hpp"

namespace gi {

// Seed folders (holding spec.json and kernel.cu) under `root`, in path order.
std::vector<std::filesystem::path> find_seed_dirs(const std::filesystem::path& root);

// The globs of a --kernels option: comma-separated, spaces around each
// trimmed, empty ones dropped ("tools/*, bspline/deformation_field").
std::vector<std::string> kernel_globs(const std::string& patterns);
// Whether family/kernel matches a glob (*, ? and [..] as in a shell).
bool kernel_matches(const std::string& kernel, const std::string& glob);

struct LibraryEntry {
  std::string name;  // family/kernel
  fitness::KernelSpec spec;
  double threads = 0;        // launched on the training workload at the default block size
  double output_values = 0;  // values the training run writes and the check compares
  double min_bytes = 0;      // the spec's min_bytes on the training workload
  nlohmann::json to_json(double bandwidth_gbs) const;
};

// Loads the spec and sizes its training workload; `cache` (optional) keeps
// the generated sizes.
LibraryEntry describe_seed(const std::filesystem::path& dir, const std::optional<std::filesystem::path>& cache);

// One line per kernel: family, kernel, work item, training threads, outputs,
// min MB and the memory floor in microseconds at `bandwidth_gbs`.
std::string library_table(const std::vector<LibraryEntry>& entries, double bandwidth_gbs);

}  // namespace gi
