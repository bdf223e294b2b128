#pragma once
// The fields of one checked run that `gi check` and `gi emulate` both print:
// ok, status, message, the errors (null when not finite), values checked and
// the output digest.
#include <nlohmann/json.hpp>

#include "fitness/workload/launch_plan.hpp"

namespace gi::cli {

nlohmann::json check_report_fields(const fitness::CheckReport& report);

}  // namespace gi::cli
