#include "fitness/output_digest.hpp"

#include <cstring>

namespace gi::fitness {

namespace {
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;
}

void OutputDigest::add(std::span<const std::byte> bytes) {
  // Each buffer is padded to whole words on its own: the digest of a list of
  // buffers does not depend on how a caller splits a buffer, only on the
  // buffers themselves, and a buffer boundary is part of the identity.
  const std::size_t words = bytes.size() / 8;
  const std::byte* p = bytes.data();
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    state_ = (state_ ^ w) * kFnvPrime;
  }
  const std::size_t tail = bytes.size() % 8;
  if (tail != 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + 8 * words, tail);
    state_ = (state_ ^ w) * kFnvPrime;
  }
  state_ = (state_ ^ bytes.size()) * kFnvPrime;
  bytes_ += bytes.size();
}

std::string OutputDigest::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 0; i < 16; ++i) s[15 - i] = digits[(state_ >> (4 * i)) & 0xf];
  return s;
}

}  // namespace gi::fitness
