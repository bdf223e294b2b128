#include "gi/cli/check_report_json.hpp"

#include <cmath>

namespace gi::cli {

nlohmann::json check_report_fields(const fitness::CheckReport& report) {
  const auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"ok", report.ok()},
          {"status", fitness::to_string(report.status)},
          {"message", report.message},
          {"max_abs_error", finite(report.max_abs_error)},
          {"max_rel_error", finite(report.max_rel_error)},
          {"rms_error", finite(report.rms_error)},
          {"values_checked", report.values_checked},
          {"output_digest", report.output_digest}};
}

}  // namespace gi::cli
