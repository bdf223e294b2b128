#pragma once
// The guard regions around every buffer of a checked run and how a damaged
// guard or a changed input is reported, shared by the GPU buffers
// (fitness/gpu/device_buffers.hpp) and the CPU emulator's (fitness/emulation/
// host_buffers.hpp), so both name the buffer, side and byte the same way.
//
// The guard pattern also catches reads outside a buffer. Around buffers of
// floating-point elements it is a quiet NaN of the element's width, so a
// value read from outside turns the output NaN and the check fails (a small
// number such as the float of 0xA5A5A5A5, -2.9e-16, vanished in a weighted
// sum and let an out-of-bounds read pass). Around integer buffers it is
// 0xA5A5A5A5: an index read from past the end is about -1.5e9, which points
// gigabytes away from every buffer.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

inline constexpr std::size_t kGuardBytes = 64 * 1024;
// A quiet NaN as a float, and repeated (0x7FFA7FFA7FFA7FFA) a quiet NaN as a
// double too, so one 32-bit word serves float, float2, float4 and double
// buffers. It differs from the output NaN fill (kNanFillWord) and from the
// NaN that GPU arithmetic produces (0x7FFFFFFF), so a kernel that writes
// either past the end is still caught.
inline constexpr std::uint32_t kFloatGuardWord = 0x7FFA7FFAu;
inline constexpr std::uint32_t kIntGuardWord = 0xA5A5A5A5u;
// The 32-bit word repeated in the guards of a buffer of `type`.
std::uint32_t guard_word(ElementType type);

// nullopt when both guards (each kGuardBytes, starting on a word boundary)
// hold `guard` repeated, else which side of buffer `name` was written and
// the first changed byte.
std::optional<std::string> describe_guard_damage(const std::string& name, std::uint32_t guard,
                                                 std::span<const std::byte> before, std::span<const std::byte> after);

// nullopt when `now` equals `initial` bit for bit, else which element of
// input buffer `name` changed first.
std::optional<std::string> describe_input_change(const std::string& name, ElementType type,
                                                 std::span<const std::byte> now, std::span<const std::byte> initial);

}  // namespace gi::fitness
