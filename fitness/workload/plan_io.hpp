#pragma once
// A LaunchPlan with its reference outputs and tolerance as one binary file:
// the parent process writes it once per workload, the evaluation worker reads
// it. Versioned, length-checked and checksummed, so a truncated or damaged
// file is refused with a message saying where and what, never half-read.
#include <cstddef>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

struct PlanBundle {
  LaunchPlan plan;
  std::vector<ExpectedOutput> expected;
  Tolerance tolerance;
};

class PlanIoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// 2: the plan's __constant__ variables follow its parameters.
// 3: each buffer's texture flag follows its element type.
inline constexpr std::uint32_t kPlanFormatVersion = 5;  // 4: 8- and 16-bit element types; 5: texture arrays

std::vector<std::byte> serialize_plan(const LaunchPlan& plan,
                                      const std::vector<ExpectedOutput>& expected,
                                      const Tolerance& tolerance);
// `origin` names the data in error messages (a file name).
PlanBundle deserialize_plan(std::span<const std::byte> bytes, const std::string& origin);

// Written to a temporary file beside `path`, then renamed: a reader never
// sees half a file. Throws PlanIoError when writing fails.
void save_plan(const std::filesystem::path& path, const LaunchPlan& plan,
               const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance);
// Throws PlanIoError naming the file, the byte offset and what was expected.
PlanBundle load_plan(const std::filesystem::path& path);

}  // namespace gi::fitness
