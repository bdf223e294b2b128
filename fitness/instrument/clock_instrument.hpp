#pragma once
// The second timing measure of the design: in-kernel GPU clock ticks. The
// variant's entry becomes an inlined __device__ body behind a wrapper kernel
// of the same name that takes one more parameter, a pointer to
// kClockCounters unsigned long longs, and per block (thread 0, between
// barriers) adds the block's clock64() span and %globaltimer span and keeps
// the earliest start and latest end:
//   [0] sum of block spans in SM clock ticks   [1] sum of block spans in ns
//   [2] earliest block start (globaltimer ns)   [3] latest block end (ns)
//   [4] blocks
// so one launch gives the ticks, the kernel's span and the SM clock
// (ticks / ns). The instrumented variant is compiled beside the plain one and
// never replaces it: only the plain variant is checked and shipped.
#include <string>
#include <string_view>

namespace gi::fitness {

inline constexpr int kClockCounters = 5;

// Throws grammar::SourceError for source that does not parse and
// std::invalid_argument when `entry` is not a __global__ function of it.
std::string instrument_clock_ticks(std::string_view source, const std::string& entry,
                                   const std::string& file_name = "kernel.cu");

}  // namespace gi::fitness
