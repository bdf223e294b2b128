#include "fitness/compile/ptxas_info.hpp"

#include <algorithm>
#include <optional>

namespace gi::fitness {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The decimal number just before `label` in `line` ("512 bytes stack frame").
// Hand-written rather than std::regex: GCC 12 warns inside <regex> under some
// optimisation and sanitizer flags, and warnings are errors here.
std::optional<int> number_before(std::string_view line, std::string_view label) {
  const std::size_t at = line.find(label);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && is_digit(line[begin - 1])) --begin;
  if (begin == end || end - begin > 9) return std::nullopt;
  int value = 0;
  for (std::size_t i = begin; i < end; ++i) value = value * 10 + (line[i] - '0');
  return value;
}

// "Used 32 registers" / "Used 1 register".
std::optional<int> registers_used(std::string_view line) {
  constexpr std::string_view kUsed = "Used ";
  const std::size_t at = line.find(kUsed);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + kUsed.size();
  int value = 0;
  const std::size_t first = i;
  while (i < line.size() && is_digit(line[i]) && i - first < 9) value = value * 10 + (line[i++] - '0');
  if (i == first || line.substr(i, 9) != " register") return std::nullopt;
  return value;
}

void keep_max(int& slot, std::optional<int> value) {
  if (value) slot = std::max(slot, *value);
}

}  // namespace

PtxasInfo parse_ptxas_info(std::string_view log) {
  // Lines look like:
  //   ptxas info    : Used 32 registers, used 0 barriers, 512 bytes cumulative stack size
  //   ptxas         .     512 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  PtxasInfo info;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(start, end - start);
    start = end + 1;
    keep_max(info.registers, registers_used(line));
    keep_max(info.stack_frame_bytes, number_before(line, "bytes stack frame"));
    keep_max(info.spill_store_bytes, number_before(line, "bytes spill stores"));
    keep_max(info.spill_load_bytes, number_before(line, "bytes spill loads"));
  }
  return info;
}

}  // namespace gi::fitness
