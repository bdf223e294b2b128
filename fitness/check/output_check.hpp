#pragma once
// Compares what a kernel left in its output buffers with the reference. The
// rules live here, on the CPU, so each is unit-tested without a GPU; the GPU
// runner normally applies the same rules on the device (fitness/gpu/device_check)
// and hands this class the per-buffer results, so the report is built in one
// place whichever side did the comparing.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

// Every 4-byte word of an output is set to this quiet NaN before a checked
// run: an element the kernel does not write is caught as NaN, and an element
// it must not write is caught by a changed bit pattern.
inline constexpr std::uint32_t kNanFillWord = 0x7FC00000u;
// An output of 8- or 16-bit elements (element_is_sub_word) has every byte
// set to this instead: its elements do not fill whole words, and the NaN
// word's low bytes are 0, the commonest value a kernel writes. Any byte value
// is a value such a kernel can write; this one (167, -89, 42919, -22617) is
// an unlikely one.
inline constexpr unsigned char kSubWordFillByte = 0xA7;

// Sets an output's bytes as a checked run starts: NaN words, or
// kSubWordFillByte for a buffer of sub-word elements.
void fill_output(std::byte* data, std::size_t bytes, ElementType type);

// What one buffer's comparison found.
struct BufferCheck {
  double max_abs = 0, max_rel = 0, sum_squares = 0;
  std::size_t checked = 0;   // values compared
  std::size_t failures = 0;  // values (or untouched elements) that failed
  std::size_t first_failing_element = 0;  // valid when failures > 0
};

// Component `c` of the element at `element` as a double.
double component_value(ElementType type, const std::byte* element, std::size_t c);

// Largest |a - b| over the components of two downloads of one buffer (run
// to run spread), over components whose bytes differ: infinity when the
// sizes differ, an integer output differs, or a difference is not finite.
double max_difference(const BufferArg& buffer, const std::vector<std::byte>& a, const std::vector<std::byte>& b);

// The components of each element to compare, after checking that the
// reference fits the buffer; throws std::invalid_argument naming the buffer
// (wrong value count, component or written element out of range).
std::vector<std::size_t> compared_components(const BufferArg& buffer, const ExpectedOutput& expected);

// The plan index of each expected output's buffer, in `expected`'s order: a
// checked run (GPU runner or CPU emulator) compares buffer indices[i] with
// expected[i]. Throws std::invalid_argument when a reference names a buffer
// the plan lacks or one that is not an output.
std::vector<std::size_t> expected_buffer_indices(const LaunchPlan& plan, const std::vector<ExpectedOutput>& expected);
// One flag per element: must the kernel write it (else it must stay the NaN fill)?
std::vector<unsigned char> written_flags(const BufferArg& buffer, const ExpectedOutput& expected);

// The message for element `e` (its bytes at `element`): which component
// fails and how, got versus expected; nullopt when the element passes. Used
// for the first failure only (and, for a failure found on the device, to
// confirm it against the host's reference: see GpuRunner::check_on_device).
std::optional<std::string> describe_element_failure(const BufferArg& buffer, const std::byte* element, std::size_t e,
                                     const ExpectedOutput& expected, bool written, const Tolerance& tolerance);

class OutputChecker {
 public:
  explicit OutputChecker(Tolerance tolerance) : tolerance_(tolerance) {}

  // Checks one buffer; `got` is its count * element_bytes bytes. Throws
  // std::invalid_argument when the reference does not fit the buffer (wrong
  // value count, element index out of range, component out of range).
  // Returns false when the buffer fails (the first failure is kept).
  bool check(const BufferArg& buffer, std::span<const std::byte> got,
             const ExpectedOutput& expected);
  // Adds a buffer compared elsewhere (on the GPU); `first_failure` is its
  // describe_element_failure message when result.failures > 0.
  bool add(const BufferCheck& result, const std::string& first_failure);

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
