#pragma once
// What the fuzz targets share: a failed invariant prints what broke and
// aborts, so libFuzzer records the input as a crash.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace gi::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "\n*** gi fuzz invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// For a catch (...) after the allowed exception types: names what escaped.
[[noreturn]] inline void unexpected_exception(const std::string& where) {
  try {
    throw;
  } catch (const std::exception& e) {
    fail(where + " threw an exception it must not throw: " + e.what());
  } catch (...) {
    fail(where + " threw a non-std exception");
  }
}

// A small deterministic generator seeded from the input, so every choice a
// target makes is reproduced by the same input.
class Choices {
 public:
  explicit Choices(std::string_view data) {
    for (unsigned char c : data) state_ = (state_ ^ c) * 1099511628211ULL;  // FNV-1a
  }
  unsigned long long next() {  // splitmix64
    unsigned long long z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool coin() { return next() & 1; }

 private:
  unsigned long long state_ = 14695981039346656037ULL;
};

}  // namespace gi::fuzz
