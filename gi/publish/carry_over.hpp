#pragma once
// Do kernels evolved on one GPU model carry over to another? (The original
// NiftyReg GI work found the best kernel differed by GPU.) On the GPU it runs
// on, `gi carry-over evolved/<this-gpu> evolved/<other-gpu>` times, for every
// kernel published for both, this GPU's tuned seed (A) against this GPU's
// evolved kernel and the other GPU's evolved kernel, each with its own
// tuning, round-robin in one process on one prepared workload: both
// speed-ups share A's samples, so they compare within one run.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/publish/comparison.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "grammar/patch.hpp"

namespace gi {

// One GPU's published kernel: evolved/<gpu>/<folder>/patch.gi and the
// tunings of its result.json.
struct PublishedKernel {
  std::string patch_text;
  Tuning seed_tuning, evolved_tuning;
  double speedup = 0, speedup_ci_low = 0;  // as published (its own run)
};

// A kernel published for both GPUs: what is timed for it.
struct CarryOverPair {
  std::string kernel;   // family/kernel
  std::string folder;   // <family>-<kernel>
  std::filesystem::path seed_dir;
  PublishedKernel here, from;
  std::string error;    // why it cannot be timed (unreadable record); empty: it can
};

// The kernel folders of `here_dir` that `from_dir` also holds, in name order,
// restricted to those whose family/kernel matches one of the comma-separated
// globs. CPU only; a record that cannot be read gives the pair an error.
std::vector<CarryOverPair> carry_over_pairs(const std::filesystem::path& here_dir,
                                            const std::filesystem::path& from_dir,
                                            const std::filesystem::path& seeds_root, const std::string& kernels = "*");

// What was measured for one pair: both comparisons against this GPU's tuned seed.
struct CarryOverRow {
  CarryOverPair pair;
  std::optional<ComparisonResult> own, other;  // this GPU's evolved kernel, the other GPU's
  std::string error;
};

// other / own in time: above 1 when the other GPU's kernel is slower here.
double carry_over_time_ratio(const CarryOverRow& row);

// The table (markdown) and the record (JSON) of a carry-over measurement.
// `versions` (versions_json: GPU, driver, gi commit, date) heads both, so a
// table read on its own says where and when it was measured.
std::string carry_over_markdown(const std::string& here_gpu, const std::string& from_gpu,
                                const std::vector<CarryOverRow>& rows, const nlohmann::json& versions);
nlohmann::json carry_over_json(const std::string& here_gpu, const std::string& from_gpu,
                               const std::vector<CarryOverRow>& rows, const nlohmann::json& versions);

// Times every pair on `device` (ComparisonOptions: rounds, cache, data seed).
std::vector<CarryOverRow> measure_carry_over(const std::vector<CarryOverPair>& pairs, const ComparisonOptions& options,
                                             const std::function<void(const std::string&)>& say);

}  // namespace gi
