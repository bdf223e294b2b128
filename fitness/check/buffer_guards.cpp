#include "fitness/check/buffer_guards.hpp"

#include <cstring>

namespace gi::fitness {

std::uint32_t guard_word(ElementType type) {
  return element_is_float(type) ? kFloatGuardWord : kIntGuardWord;
}

std::optional<std::string> describe_guard_damage(const std::string& name, std::uint32_t guard,
                                                 std::span<const std::byte> before, std::span<const std::byte> after) {
  const std::span<const std::byte> sides[2] = {before, after};
  for (int side = 0; side < 2; ++side) {
    const std::span<const std::byte> bytes = sides[side];
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      // Both guards start on a word boundary: byte i is byte i % 4 of the word.
      const unsigned expected = (guard >> (8 * (i % 4))) & 0xFFu;
      const auto got = static_cast<unsigned>(bytes[i]);
      if (got == expected) continue;
      const std::string offset = side == 0 ? std::to_string(bytes.size() - i) + " bytes before"
                                           : std::to_string(i) + " bytes after the end of";
      return "guard region " + std::string(side == 0 ? "before" : "after") + " buffer '" + name +
             "' was written: byte " + offset + " the buffer is " + std::to_string(got) + ", expected " +
             std::to_string(expected);
    }
  }
  return std::nullopt;
}

std::optional<std::string> describe_input_change(const std::string& name, ElementType type,
                                                 std::span<const std::byte> now, std::span<const std::byte> initial) {
  if (now.size() == initial.size() && std::memcmp(now.data(), initial.data(), now.size()) == 0) return std::nullopt;
  const std::size_t eb = element_bytes(type);
  std::size_t first = 0;
  while (first < now.size() && first < initial.size() && now[first] == initial[first]) ++first;
  return "input buffer '" + name + "' was modified: element " + std::to_string(first / eb) + " (byte " +
         std::to_string(first) + ") differs from the uploaded input";
}

}  // namespace gi::fitness
