#pragma once
// An ablation study (`gi ablate STUDY.json`): which edit families, which raw
// material (switch paths, coarsening, launch tuning) and which search
// strategies matter. A study is cells (one setting of the factors) x
// kernels x repeats (RNG seeds); every run is a normal run directory.
//
// STUDY.json:
//   {
//     "kernels": ["seeds/bspline/deformation_field", "seeds/tools/sum_reduction"],
//     "repeats": 5,                 // RNG seeds first_seed .. first_seed + repeats - 1
//     "first_seed": 1,              // optional
//     "budget": {"population": 30, "generations": 6},   // every cell's, unless the cell says
//     "algorithm": "gp",            // optional: the baseline's strategy
//     "baseline": "everything",     // optional: the cell the statistics compare against
//     "vary": {                     // optional: one factor at a time around "everything"
//       "leave_out": ["delete", "insert", "replace", "coarsen"],  // a cell per family left out
//       "alone": ["line", "cuda"],  // a cell per family (or group) searched alone
//       "algorithms": ["random", "local"],
//       "budgets": [{"name": "half", "generations": 3}]
//     },
//     "cells": [{"name": "mine", "families": "line,coarsen", "launch_tuning": false,
//                "parameter_sweep": false}],   // each flag optional, default true
//     "cell_kernels": {"switches_only": ["seeds/tools/sum_reduction"]},  // optional: a cell
//                                   // runs on these kernels only (others: on every kernel)
//     "timing_budget_seconds": 0.5, // optional: each candidate's timing during the search
//     "sanitizers": true            // optional: false skips compute-sanitizer in validation
//   }
//
// Four cells are always there, so every study can say what GI's line edits
// add beyond choosing switches and beyond launch tuning:
//   everything            all families, launch tuning, the search
//   line_and_cuda_edits   Langdon's line edits and the CUDA-aware families, no launch tuning
//   switches_only         the define family alone (switch paths), no launch tuning
//   launch_tuning_only    no search: block size and compile options alone
// A cell whose families have no edit in a kernel (switches_only on a seed
// without switches) is not run there: its result is the seed's by definition.
//
// A plain seed (`gi plain`) and its library seed share a slug
// (runs/plain/tools/sum_reduction and seeds/tools/sum_reduction are both
// tools-sum_reduction), so the statistics put them in one table: that is how
// transform_only on the plain seed is set against switches_only on the
// library's. Two kernels with one slug must never share a cell
// (cell_kernels keeps them apart), or their runs would share folders.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi {

struct StudyCell {
  std::string name;
  std::string families = "all";
  std::string algorithm = "gp";
  bool launch_tuning = true;
  bool search = true;
  int population = 0;   // 0: the study's budget
  int generations = 0;
  std::string varies;   // what it changes relative to "everything", for the report
  bool parameter_sweep = true;  // the sweep of the winner's edit parameters after the search

  nlohmann::json to_json() const;
  static StudyCell from_json(const nlohmann::json& j);
};

struct StudyPlan {
  std::vector<std::string> kernels;  // seed folders as given
  int repeats = 5;
  std::uint64_t first_seed = 1;
  int population = 30;
  int generations = 6;
  double timing_budget_seconds = 0.5;
  bool sanitizers = true;  // compute-sanitizer in each winner's validation
  std::string baseline = "everything";
  std::vector<StudyCell> cells;  // named cells first, then the study's
  // cell name -> the kernels it runs on; a cell not named runs on every kernel.
  std::map<std::string, std::vector<std::string>> cell_kernels;

  bool runs(const std::string& cell, const std::string& kernel) const;

  nlohmann::json to_json() const;
  // The plan as to_json wrote it (study.json keeps it with its cells
  // expanded); throws nlohmann::json::exception for a missing field.
  static StudyPlan from_json(const nlohmann::json& j);
};

// Reads STUDY.json's text; throws std::runtime_error naming `file` and the
// field for anything malformed (an unknown field, a cell name used twice, a
// baseline that is no cell, repeats < 1, a cell_kernels entry naming no
// cell or no kernel of the study, two kernels of one slug in one cell).
StudyPlan parse_study(const std::string& text, const std::string& file);

// One run of the study.
struct StudyRun {
  std::string kernel;     // seed folder
  std::string cell;
  int repeat = 0;         // 0-based
  std::uint64_t seed = 1;
  std::string run_dir;    // relative to the study folder: runs/<kernel>/<cell>/seed-<n>
  std::string status = "pending";  // pending, running, complete, rejected, failed, not_applicable
  std::string error;

  nlohmann::json to_json() const;
  static StudyRun from_json(const nlohmann::json& j);
};

// Every run of the plan, repeat-major (all cells and kernels of seed 1, then
// seed 2, ...), so a study cut short by its budget still has every cell.
std::vector<StudyRun> expand_runs(const StudyPlan& plan);

// "bspline-deformation_field" for "seeds/bspline/deformation_field/".
std::string kernel_slug(const std::string& seed_dir);

}  // namespace gi
