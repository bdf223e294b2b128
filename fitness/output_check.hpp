#pragma once
// Compares what a kernel left in its output buffers (bytes copied back from
// the GPU) with the reference. CPU only, so every rule is unit-tested without
// a GPU.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fitness/launch_plan.hpp"

namespace gi::fitness {

// Every 4-byte word of an output is set to this quiet NaN before a checked
// run: an element the kernel does not write is caught as NaN, and an element
// it must not write is caught by a changed bit pattern.
inline constexpr std::uint32_t kNanFillWord = 0x7FC00000u;

class OutputChecker {
 public:
  explicit OutputChecker(Tolerance tolerance) : tolerance_(tolerance) {}

  // Checks one buffer; `got` is its count * element_bytes bytes. Throws
  // std::invalid_argument when the reference does not fit the buffer (wrong
  // value count, element index out of range, component out of range).
  // Returns false when the buffer fails (the first failure is kept).
  bool check(const BufferArg& buffer, std::span<const std::byte> got,
             const ExpectedOutput& expected);

  // Ok, or WrongOutput with a message naming buffer, element, component, got
  // and expected of the first failure and how many values failed.
  CheckReport report() const;

 private:
  Tolerance tolerance_;
  double max_abs_ = 0, max_rel_ = 0, sum_squares_ = 0;
  std::size_t values_checked_ = 0;
  std::size_t failures_ = 0;
  std::string first_failure_;
};

}  // namespace gi::fitness
