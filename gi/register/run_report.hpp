#pragma once
// What `gi register` leaves besides its images: register.json (inputs,
// options, device, every kernel's origin, levels, end-to-end time and the
// per-kernel profile) and the profile as a Markdown table, which tells the
// overnight evolution which kernels matter end to end.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gi/register/kernel_set.hpp"
#include "gi/register/registration.hpp"

namespace gi::reg {

// Kernels sorted by total time, with launches, milliseconds and share.
std::string profile_table(const RegistrationResult& result);

nlohmann::json run_record(const RegistrationResult& result, const RegistrationOptions& options,
                          const KernelSet& kernels, const std::string& device);

}  // namespace gi::reg
