#pragma once
// What one evaluation of a variant produced, as the search sees it: a status,
// the timing (median and spread) and the errors against the reference.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/patch.hpp"

namespace gi {

enum class EvalStatus {
  Ok,
  CompileError,
  LaunchError,
  Timeout,
  WrongOutput,
  IllegalAddress,
  Trap,
  GuardViolation,
  InputModified,
  LoadError,
  WorkerDied,
  Rejected,  // the patch breaks a rule of the seed's spec (a switch setting it does not allow): never compiled
};

std::string to_string(EvalStatus s);
EvalStatus eval_status_from_string(const std::string& s);  // throws naming the unknown status

struct Evaluation {
  EvalStatus status = EvalStatus::CompileError;
  bool cached = false;     // an identical variant was already measured in this generation
  bool same_binary = false;  // its binary equals one already measured in this generation; that measurement is shared
  bool compiled = false;   // NVRTC produced a binary
  double median_ms = std::numeric_limits<double>::infinity();
  double relative_spread = 0;
  double max_abs_error = 0, max_rel_error = 0, rms_error = 0;
  double compile_seconds = 0;
  double measure_seconds = 0;  // wall time of the worker's check and timing
  int registers = -1;
  // The second measure (fitness/instrument/clock_instrument.hpp), when the run asks for
  // it: median over samples of the summed per-block clock64 spans, the
  // kernel's %globaltimer span and the SM clock.
  double clock_ticks = std::numeric_limits<double>::infinity();
  double clock_span_ms = 0, sm_mhz = 0;
  bool rank_by_ticks = false;  // the run's choice: rank by clock ticks instead of event time
  std::string message;     // why it failed, for the log
  // The training workload whose check failed ("train", "train:2"), when one
  // did: run logs count failures per workload. Empty when valid, and for
  // failures that belong to no workload (compile or module load errors).
  std::string failed_workload;
  std::string key;         // canonical variant key (source hash + options + launch)
  // Measured with several GPUs (gi/evaluate/gpu_evaluator.hpp): the GPU it ran on and
  // its time there; median_ms is then that time on the first GPU's scale.
  int device = -1;
  double device_median_ms = std::numeric_limits<double>::infinity();

  bool valid() const { return status == EvalStatus::Ok; }
  // What ranks variants: the event median (default) or the clock ticks.
  double score() const { return rank_by_ticks ? clock_ticks : median_ms; }
};

// Fitness order: a valid variant beats an invalid one; then the lower score().
bool fitter(const Evaluation& a, const Evaluation& b);

nlohmann::json to_json(const Evaluation& e);
Evaluation evaluation_from_json(const nlohmann::json& j);

struct Individual {
  grammar::Patch patch;
  Evaluation eval;
};

nlohmann::json to_json(const Individual& i);
Individual individual_from_json(const nlohmann::json& j);

}  // namespace gi
