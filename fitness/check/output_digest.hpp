#pragma once
// A digest of what a kernel left in its output buffers, so that two runs
// (the same variant twice, or on two days) can be compared bit for bit
// without keeping the outputs. The per-buffer part is a sum of per-word
// hashes, so the GPU can compute it in parallel, in any order, and get the
// same bits as this CPU code (fitness/gpu/device_check.cpp holds the device
// twin of digest_word; a GPU test checks that the two agree).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace gi::fitness {

// SplitMix64's finaliser.
constexpr std::uint64_t digest_mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The hash of the 4-byte word at `word_index` of buffer number `ordinal`.
constexpr std::uint64_t digest_word(std::uint64_t ordinal, std::uint64_t word_index, std::uint32_t word) {
  return digest_mix(digest_mix(ordinal * 0xd1b54a32d192ed03ull + word_index) ^ word);
}

// Sum over the buffer's words of digest_word (a trailing part word is
// zero-padded), modulo 2^64.
std::uint64_t digest_buffer_sum(std::uint64_t ordinal, std::span<const std::byte> bytes);

class OutputDigest {
 public:
  // Buffers in plan order: the order, each buffer's boundary and its byte
  // count are part of the identity.
  void add(std::span<const std::byte> bytes);
  // The same for a buffer whose digest_buffer_sum was computed elsewhere (on
  // the GPU) with ordinal next_ordinal().
  void add_sum(std::uint64_t buffer_sum, std::uint64_t bytes);
  std::uint64_t next_ordinal() const { return buffers_; }
  // 16 lower-case hex digits.
  std::string hex() const;

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ull;
  std::uint64_t buffers_ = 0;
};

}  // namespace gi::fitness
