#pragma once
// Smooth random fields: value noise on a coarse lattice (one random value in
// [-1, 1] per lattice node), interpolated with a quintic fade so the field and
// its first two derivatives are continuous. The lattice is shifted by a random
// fraction of a cell, so lattice nodes do not fall on the same voxels for
// every seed. Per-axis tables make one evaluation 8 lookups, so a 217^3 field
// costs well under a second.
#include <cstdint>
#include <vector>

#include "seeds/common/volume.hpp"

namespace gi::seeds {

class SmoothNoise {
 public:
  // `cell`: lattice spacing in voxels (the field's correlation length).
  SmoothNoise(Dim3 dims, double cell, std::uint64_t seed, std::uint64_t stream);

  // About [-1, 1]; x, y, z must lie inside the dims given at construction.
  double at(int x, int y, int z) const {
    const Axis& ax = x_[static_cast<std::size_t>(x)];
    const Axis& ay = y_[static_cast<std::size_t>(y)];
    const Axis& az = z_[static_cast<std::size_t>(z)];
    const std::size_t sx = 1, sy = static_cast<std::size_t>(nx_), sz = static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_);
    const float* p = values_.data() + static_cast<std::size_t>(az.cell) * sz + static_cast<std::size_t>(ay.cell) * sy +
                     static_cast<std::size_t>(ax.cell);
    const double c00 = p[0] + ax.t * (p[sx] - p[0]);
    const double c10 = p[sy] + ax.t * (p[sy + sx] - p[sy]);
    const double c01 = p[sz] + ax.t * (p[sz + sx] - p[sz]);
    const double c11 = p[sz + sy] + ax.t * (p[sz + sy + sx] - p[sz + sy]);
    const double c0 = c00 + ay.t * (c10 - c00);
    const double c1 = c01 + ay.t * (c11 - c01);
    return c0 + az.t * (c1 - c0);
  }

 private:
  struct Axis {
    int cell;
    double t;  // faded fraction within the cell
  };
  static std::vector<Axis> axis(int extent, double cell, double shift, int nodes);
  int nx_ = 0, ny_ = 0, nz_ = 0;
  std::vector<float> values_;
  std::vector<Axis> x_, y_, z_;
};

}  // namespace gi::seeds
