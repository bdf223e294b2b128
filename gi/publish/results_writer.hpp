#pragma once
// What a registration developer adopts (docs/results.md):
//
//   evolved/<gpu-slug>/<family>-<kernel>/   e.g. evolved/nvidia-h200/bspline-deformation_field/
//     kernel.cu    the patched source, switches resolved (no dead path)
//     patch.gi     the minimised patch (edits separated by spaces), pinned to the seed
//     kernel.diff  unified diff against seeds/<family>/<kernel>/kernel.cu; its
//                  paths are relative to the repository root, so
//                  `patch -p1 < evolved/.../kernel.diff` applies from there.
//                  For a seed with switches the diff is against its plain
//                  path (every switch at its default, resolved), written
//                  beside it as plain.cu: `patch -p1` applies it in the folder
//     plain.cu     (seeds with switches only) the plain seed the diff is against
//     result.json  times, ratio, memory floor, tuning, held-out validation,
//                  sanitizers, each edit's contribution, review flag
//     run_summary.json  the run in brief (gi/publish/run_summary.hpp): what
//                  the report draws; the run's raw records stay in runs/
//   evolved/<gpu-slug>/README.md   a table over every kernel folder's result.json
//
// The folder is named <family>-<kernel> (the seed's two folder names joined
// by '-'): kernel folder names repeat across families, and one level keeps
// the folders flat under the GPU.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/publish/comparison.hpp"
#include "gi/publish/validation.hpp"

namespace gi {

struct ResultRecord {
  std::string family, kernel;        // seeds/<family>/<kernel>
  std::string run_id;
  std::string date;                  // ISO 8601 UTC
  nlohmann::json versions;           // versions_json(): gpu, driver, nvrtc, gi_commit, ...
  std::string seed_source;           // the plain seed, switches resolved (kernel.cu itself without switches)
  std::string evolved_source;        // with the patch applied, switches resolved
  bool seed_has_switches = false;    // the diff is then against plain.cu
  std::string patch_text;            // the minimised patch's edits
  std::string seed_sha256;           // of the seed's kernel.cu: patch.gi is pinned to it
  // The seed's kernel.cu as the diff names it, from where gi ran (a user's
  // seed lives outside seeds/); empty: seeds/<family>/<kernel>/kernel.cu.
  std::string seed_path;
  ComparisonResult comparison;
  // The evolved kernel against the best switch setting without line edits
  // (seeds with switches): what GI's edits added beyond choosing a path.
  std::optional<ComparisonResult> over_switches;
  ValidationResult validation;
  // When the search's best was set aside (not shown faster, or rejected by
  // validation) and another candidate is published instead: what was set
  // aside and why (gi/run/post_evolution.hpp). `kept` names what was published.
  // tuned_seed: the seed at a tuning with compiler options, set aside for
  // failing validation, when the seed without them is published.
  std::optional<nlohmann::json> search_best, switch_best, tuned_seed;
  std::string kept;  // "" (the winner), "the best switch setting", "the tuned seed", "the tuned seed without its compiler options"
  nlohmann::json edits = nlohmann::json::array();  // minimised.json "edits": each with its contribution
  nlohmann::json run_summary;  // run_summary(run dir); null: none is written
};

// "<family>-<kernel>"
std::string result_folder_name(const std::string& family, const std::string& kernel);
// "seeds/<family>/<kernel>/kernel.cu": the seed as the diff names it.
std::string seed_source_path(const std::string& family, const std::string& kernel);
// The GPU folder's name: versions' gpu_slug, else the slug of the measured device.
std::string result_gpu_slug(const ResultRecord& record);

// result.json's content (CPU only).
nlohmann::json result_json(const ResultRecord& record);

// Writes the kernel folder (every file atomically) and regenerates the GPU
// folder's README.md; returns the kernel folder.
std::filesystem::path write_result(const std::filesystem::path& evolved_root, const ResultRecord& record);

// The README table over result.json contents, one row per kernel, sorted by
// folder name (CPU only).
std::string results_readme(const std::string& gpu_slug, const std::vector<nlohmann::json>& results);
// Reads every <folder>/result.json under `gpu_dir` and writes gpu_dir/README.md.
// A result.json that cannot be read gets a row saying so.
void write_results_readme(const std::filesystem::path& gpu_dir);

}  // namespace gi
