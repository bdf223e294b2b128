#include "seeds/common/smooth_noise.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "seeds/common/rng.hpp"

namespace gi::seeds {

std::vector<SmoothNoise::Axis> SmoothNoise::axis(int extent, double cell, double shift, int nodes) {
  std::vector<Axis> a(static_cast<std::size_t>(extent));
  for (int i = 0; i < extent; ++i) {
    const double g = i / cell + shift;
    const int c = std::min(static_cast<int>(std::floor(g)), nodes - 2);
    const double f = g - c;
    a[static_cast<std::size_t>(i)] = Axis{c, f * f * f * (f * (f * 6 - 15) + 10)};
  }
  return a;
}

SmoothNoise::SmoothNoise(Dim3 dims, double cell, std::uint64_t seed, std::uint64_t stream) {
  if (!(cell > 0)) throw std::runtime_error("SmoothNoise: cell must be positive");
  Rng rng(seed, stream);
  const double sx = rng.uniform(0, 1), sy = rng.uniform(0, 1), sz = rng.uniform(0, 1);
  auto nodes = [&](int extent, double shift) { return static_cast<int>(std::floor((extent - 1) / cell + shift)) + 2; };
  nx_ = nodes(dims.x, sx);
  ny_ = nodes(dims.y, sy);
  nz_ = nodes(dims.z, sz);
  values_.resize(static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_) * static_cast<std::size_t>(nz_));
  for (std::size_t i = 0; i < values_.size(); ++i)
    values_[i] = static_cast<float>(hash_uniform(seed, stream, i, -1.0, 1.0));
  x_ = axis(dims.x, cell, sx, nx_);
  y_ = axis(dims.y, cell, sy, ny_);
  z_ = axis(dims.z, cell, sz, nz_);
}

}  // namespace gi::seeds
