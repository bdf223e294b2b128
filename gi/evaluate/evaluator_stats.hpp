#pragma once
// Where an evaluator's time went and what it did: kept per run in
// evaluator_stats.json, summed over the calls of a resumed run.
#include <nlohmann/json.hpp>

namespace gi {

struct EvaluatorStats {
  double compile_seconds = 0;       // wall time of compile batches (overlapping GPU work)
  double compile_wait_seconds = 0;  // time evaluate() waited for compiles
  double gpu_seconds = 0;           // time evaluate() waited for the worker
  double total_seconds = 0;         // time in evaluate()
  double load_ms = 0, check_ms = 0, time_ms = 0, clock_ms = 0;  // inside the worker: module load, checked run, timing, clock ticks
  double prepare_seconds = 0;  // generating workloads and loading them
  long evaluations = 0, measured = 0, compiled = 0, compile_cache_hits = 0, worker_restarts = 0;
  long ptx_reuses = 0;  // compiles whose PTX was already assembled (ptxas skipped)
  long binary_reuses = 0;  // variants whose binary was already measured in this generation (not measured again)
  nlohmann::json to_json() const;
  // Reads what to_json wrote (derived fields are recomputed); throws
  // nlohmann::json::exception on a field of the wrong type.
  static EvaluatorStats from_json(const nlohmann::json& j);
  // Adds another call's counts: a resumed run reports all its calls.
  EvaluatorStats& operator+=(const EvaluatorStats& other);
};

}  // namespace gi
