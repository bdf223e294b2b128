#include "gi/evaluate/evaluation.hpp"

#include <cmath>
#include <stdexcept>

namespace gi {
namespace {
const std::vector<std::pair<EvalStatus, const char*>> kNames = {
    {EvalStatus::Ok, "ok"},
    {EvalStatus::CompileError, "compile_error"},
    {EvalStatus::LaunchError, "launch_error"},
    {EvalStatus::Timeout, "timeout"},
    {EvalStatus::WrongOutput, "wrong_output"},
    {EvalStatus::IllegalAddress, "illegal_address"},
    {EvalStatus::Trap, "trap"},
    {EvalStatus::GuardViolation, "guard_violation"},
    {EvalStatus::InputModified, "input_modified"},
    {EvalStatus::LoadError, "load_error"},
    {EvalStatus::WorkerDied, "worker_died"},
    {EvalStatus::Rejected, "rejected"},
};

// JSON has no infinity: an unmeasured time is written as null.
nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace

std::string to_string(EvalStatus s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "unknown";
}

EvalStatus eval_status_from_string(const std::string& s) {
  for (const auto& [status, name] : kNames)
    if (s == name) return status;
  throw std::runtime_error("unknown evaluation status '" + s + "'");
}

bool fitter(const Evaluation& a, const Evaluation& b) {
  if (a.valid() != b.valid()) return a.valid();
  return a.score() < b.score();
}

nlohmann::json to_json(const Evaluation& e) {
  nlohmann::json j = {{"status", to_string(e.status)}, {"cached", e.cached}, {"same_binary", e.same_binary}, {"compiled", e.compiled},
          {"median_ms", number_or_null(e.median_ms)}, {"relative_spread", e.relative_spread},
          {"max_abs_error", e.max_abs_error}, {"max_rel_error", e.max_rel_error}, {"rms_error", e.rms_error},
          {"compile_seconds", e.compile_seconds}, {"measure_seconds", e.measure_seconds}, {"registers", e.registers}, {"message", e.message},
          {"key", e.key}};
  if (!e.failed_workload.empty()) j["failed_workload"] = e.failed_workload;
  if (e.device >= 0) j["device"] = {{"index", e.device}, {"median_ms", number_or_null(e.device_median_ms)}};
  if (e.rank_by_ticks || std::isfinite(e.clock_ticks))
    j["clock_ticks"] = {{"median_ticks", number_or_null(e.clock_ticks)}, {"span_ms", e.clock_span_ms},
                        {"sm_mhz", e.sm_mhz}, {"ranks", e.rank_by_ticks}};
  return j;
}

Evaluation evaluation_from_json(const nlohmann::json& j) {
  Evaluation e;
  e.status = eval_status_from_string(j.at("status").get<std::string>());
  e.cached = j.value("cached", false);
  e.same_binary = j.value("same_binary", false);
  e.compiled = j.value("compiled", false);
  e.median_ms = j.at("median_ms").is_null() ? std::numeric_limits<double>::infinity() : j.at("median_ms").get<double>();
  e.relative_spread = j.value("relative_spread", 0.0);
  e.max_abs_error = j.value("max_abs_error", 0.0);
  e.max_rel_error = j.value("max_rel_error", 0.0);
  e.rms_error = j.value("rms_error", 0.0);
  e.compile_seconds = j.value("compile_seconds", 0.0);
  e.measure_seconds = j.value("measure_seconds", 0.0);
  e.registers = j.value("registers", -1);
  e.message = j.value("message", "");
  e.key = j.value("key", "");
  e.failed_workload = j.value("failed_workload", "");
  if (j.contains("device")) {
    const auto& d = j.at("device");
    e.device = d.at("index").get<int>();
    e.device_median_ms = d.at("median_ms").is_null() ? std::numeric_limits<double>::infinity() : d.at("median_ms").get<double>();
  }
  if (j.contains("clock_ticks")) {
    const auto& c = j.at("clock_ticks");
    e.clock_ticks = c.at("median_ticks").is_null() ? std::numeric_limits<double>::infinity()
                                                   : c.at("median_ticks").get<double>();
    e.clock_span_ms = c.value("span_ms", 0.0);
    e.sm_mhz = c.value("sm_mhz", 0.0);
    e.rank_by_ticks = c.value("ranks", false);
  }
  return e;
}

nlohmann::json to_json(const Individual& i) { return {{"patch", grammar::to_string(i.patch)}, {"eval", to_json(i.eval)}}; }

Individual individual_from_json(const nlohmann::json& j) {
  return {grammar::parse_patch(j.at("patch").get<std::string>(), "checkpoint"), evaluation_from_json(j.at("eval"))};
}

}  // namespace gi

#include "gi/evaluate/evaluator.hpp"

namespace gi {

nlohmann::json to_json(const Tuning& t) { return {{"block_size", t.block_size}, {"options", t.options}}; }

Tuning tuning_from_json(const nlohmann::json& j) {
  Tuning t;
  t.block_size = j.at("block_size").get<unsigned>();
  t.options = j.at("options").get<std::vector<std::string>>();
  return t;
}

}  // namespace gi
