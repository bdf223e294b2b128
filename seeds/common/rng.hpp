#pragma once
// A tiny seeded RNG for workload generation. Values are hashes of
// (seed, stream, index), not a sequence: any voxel's random number can be
// computed on its own, so generation runs on several threads and still gives
// the same workload for the same seed, whatever the thread count.
#include <cmath>
#include <cstdint>

namespace gi::seeds {

// SplitMix64's finaliser: a bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t hash3(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

// Uniform in [0, 1), 53 random bits.
constexpr double unit_interval(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

inline double hash_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, double lo, double hi) {
  return lo + (hi - lo) * unit_interval(hash3(seed, stream, index));
}

// Standard normal (Box-Muller on two hashed uniforms).
inline double hash_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const double u1 = 1.0 - unit_interval(hash3(seed, stream, 2 * index));  // (0, 1]
  const double u2 = unit_interval(hash3(seed, stream, 2 * index + 1));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// A sequential generator for the few draws that are not per voxel.
class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) : state_(hash3(seed, stream, 0x5eed)) {}
  std::uint64_t next() { return mix64(state_++); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit_interval(next()); }

 private:
  std::uint64_t state_;
};

// Streams: one per independent random quantity, so adding a quantity to a
// generator never changes the others.
enum Stream : std::uint64_t {
  kStreamShape = 1,
  kStreamShapeNoise,
  kStreamSulci,
  kStreamControlGrid,
  kStreamControlJitter,
  kStreamTissue,
  kStreamTissueNoise,
  kStreamBias,
  kStreamField,
  kStreamFieldNoise,
  kStreamAffine,
  kStreamJunk,
};

}  // namespace gi::seeds
