#pragma once
// Unified diff of two texts, line by line, in the format that `patch -p1`
// applies: developers adopting an evolved kernel read and apply this diff.
#include <cstddef>
#include <string>
#include <string_view>

namespace gi::grammar {

// Largest number of lines either text may have. The line diff (Myers, linear
// space) needs O(N + M) memory but O((N + M) * D) time for D changed lines;
// kernels are a few hundred lines, so this bound only rejects input that is
// not a kernel (std::length_error) instead of running for minutes.
inline constexpr std::size_t kMaxDiffLines = 100000;

// Differences from `old_text` to `new_text` as a unified diff: header lines
// "--- <old_label>" and "+++ <new_label>" (labels written verbatim, e.g.
// "a/seeds/x/kernel.cu"), then hunks "@@ -l,s +l,s @@" with `context` lines
// of context around each change (hunks whose contexts touch are merged; a
// count of 1 is written as "l" alone, as GNU diff does). A last line without
// '\n' is followed by "\ No newline at end of file". A line is compared with
// its terminator, so adding or removing the final newline is a change.
// Returns "" when the texts are equal. Throws std::invalid_argument when
// `context` < 0 and std::length_error when a text has more than
// kMaxDiffLines lines.
std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_label, std::string_view new_label,
                         int context = 3);

}  // namespace gi::grammar
