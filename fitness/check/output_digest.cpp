#include "fitness/check/output_digest.hpp"

#include <algorithm>
#include <cstring>

namespace gi::fitness {

std::uint64_t digest_buffer_sum(std::uint64_t ordinal, std::span<const std::byte> bytes) {
  std::uint64_t sum = 0;
  const std::size_t words = (bytes.size() + 3) / 4;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint32_t w = 0;
    std::memcpy(&w, bytes.data() + 4 * i, std::min<std::size_t>(4, bytes.size() - 4 * i));
    sum += digest_word(ordinal, i, w);
  }
  return sum;
}

void OutputDigest::add(std::span<const std::byte> bytes) { add_sum(digest_buffer_sum(buffers_, bytes), bytes.size()); }

void OutputDigest::add_sum(std::uint64_t buffer_sum, std::uint64_t bytes) {
  state_ = digest_mix(state_ ^ buffer_sum) ^ digest_mix(bytes + 0x51afd7ed558ccd00ull);
  ++buffers_;
}

std::string OutputDigest::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 0; i < 16; ++i) s[15 - i] = digits[(state_ >> (4 * i)) & 0xf];
  return s;
}

}  // namespace gi::fitness
