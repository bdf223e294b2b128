#pragma once
// What a result was measured with: GPU, driver, NVRTC, gi commit, date.
#include <nlohmann/json.hpp>
#include <string>

namespace gi {

nlohmann::json versions_json(int device);
// The commit gi was built from (`git describe --dirty`), or "unknown".
std::string gi_commit();
std::string gpu_slug(const std::string& gpu_name);  // "NVIDIA H200" -> "nvidia-h200"
std::string utc_now_iso8601();
// The NVIDIA kernel driver's release ("580.159.04"); empty without one.
std::string kernel_driver_release();
// The release in a /proc/driver/nvidia/version line; empty when none.
std::string driver_release_from(const std::string& line);

}  // namespace gi
