#pragma once
// The compact record of an evolution run that is published beside its kernel
// (evolved/<gpu>/<family>-<kernel>/run_summary.json) and that `gi report`
// draws from. A run directory's raw records (one JSON line per evaluation,
// checkpoints, set-aside candidates) grow to megabytes per kernel and stay in
// the ignored runs/ folder; what a reader of the results needs from them fits
// in a few kilobytes:
//
//   {"format": "gi-run-summary-1", "run_id", "config", "versions",
//    "evaluations": N (not counting the seed, re-measured each generation),
//    "generations": {"generation": [0, 1, ...], "seed_ms": [...], "best_ms",
//                    "median_ms", "search_best_ms", "total": [...],
//                    "outcomes": {name: [count per generation]}},
//    "search": {"evaluations_per_second", "elapsed_seconds"} (last generation),
//    "stage_seconds": {stage: seconds}, "evaluator_stats": {...}}
//
// "outcomes" counts each evaluation once: "cached" and "same_binary" first
// (their status is a copy of the evaluation they repeat), the others under
// their status (gi/evaluate/evaluation.hpp's names). Times are rounded to six
// significant digits: the summary is a record to read and plot, not to resume.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace gi {

inline constexpr const char* kRunSummaryFormat = "gi-run-summary-1";
inline constexpr const char* kRunSummaryFile = "run_summary.json";

// Reads the run directory's config.json, versions.json, generations.jsonl,
// evaluations.jsonl (or .jsonl.gz), stage_seconds.json and
// evaluator_stats.json. A missing file leaves its part out (a run killed
// early still gets a summary); a malformed one throws naming the file and line.
nlohmann::json run_summary(const std::filesystem::path& run_dir);

// The file's text: one top-level field a line and one generations column a line, so
// that it stays small (a published kernel's folder is kept under 50 KB) and
// a new run's summary reads well in a diff.
std::string run_summary_text(const nlohmann::json& summary);

}  // namespace gi
