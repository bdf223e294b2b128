#include "gi/evaluate/evaluator_stats.hpp"

namespace gi {

nlohmann::json EvaluatorStats::to_json() const {
  // Compiles overlap GPU work: the time the search waited for compiles is
  // compile_wait; what is neither waiting nor measuring is overhead.
  const double overhead = total_seconds - compile_wait_seconds - gpu_seconds;
  return {{"compile_seconds", compile_seconds}, {"compile_wait_seconds", compile_wait_seconds},
          {"gpu_seconds", gpu_seconds}, {"overhead_seconds", overhead}, {"total_seconds", total_seconds},
          {"prepare_seconds", prepare_seconds},
          {"worker_phases_seconds", {{"load", load_ms / 1000}, {"check", check_ms / 1000}, {"timing", time_ms / 1000}, {"clock_ticks", clock_ms / 1000}}},
          {"evaluations_per_second", total_seconds > 0 ? static_cast<double>(evaluations) / total_seconds : 0.0},
          {"evaluations", evaluations}, {"measured", measured}, {"compiled", compiled},
          {"compile_cache_hits", compile_cache_hits}, {"ptx_reuses", ptx_reuses},
          {"binary_reuses", binary_reuses},
          {"worker_restarts", worker_restarts}};
}

EvaluatorStats EvaluatorStats::from_json(const nlohmann::json& j) {
  EvaluatorStats s;
  s.compile_seconds = j.value("compile_seconds", 0.0);
  s.compile_wait_seconds = j.value("compile_wait_seconds", 0.0);
  s.gpu_seconds = j.value("gpu_seconds", 0.0);
  s.total_seconds = j.value("total_seconds", 0.0);
  s.prepare_seconds = j.value("prepare_seconds", 0.0);
  const nlohmann::json phases = j.value("worker_phases_seconds", nlohmann::json::object());
  s.load_ms = 1000 * phases.value("load", 0.0);
  s.check_ms = 1000 * phases.value("check", 0.0);
  s.time_ms = 1000 * phases.value("timing", 0.0);
  s.clock_ms = 1000 * phases.value("clock_ticks", 0.0);
  s.evaluations = j.value("evaluations", 0L);
  s.measured = j.value("measured", 0L);
  s.compiled = j.value("compiled", 0L);
  s.compile_cache_hits = j.value("compile_cache_hits", 0L);
  s.worker_restarts = j.value("worker_restarts", 0L);
  s.ptx_reuses = j.value("ptx_reuses", 0L);
  s.binary_reuses = j.value("binary_reuses", 0L);
  return s;
}

EvaluatorStats& EvaluatorStats::operator+=(const EvaluatorStats& o) {
  compile_seconds += o.compile_seconds;
  compile_wait_seconds += o.compile_wait_seconds;
  gpu_seconds += o.gpu_seconds;
  total_seconds += o.total_seconds;
  load_ms += o.load_ms;
  check_ms += o.check_ms;
  time_ms += o.time_ms;
  clock_ms += o.clock_ms;
  prepare_seconds += o.prepare_seconds;
  evaluations += o.evaluations;
  measured += o.measured;
  compiled += o.compiled;
  compile_cache_hits += o.compile_cache_hits;
  worker_restarts += o.worker_restarts;
  ptx_reuses += o.ptx_reuses;
  binary_reuses += o.binary_reuses;
  return *this;
}

}  // namespace gi
