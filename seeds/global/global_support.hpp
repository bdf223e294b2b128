#pragma once
// Affine transformations in voxel space for the global (affine) family and
// for generators that need the affine part of a registration's deformation.
// The matrix holds the first three rows of the homogeneous 4x4 matrix, row
// by row: x' = m[0] x + m[1] y + m[2] z + m[3], y' = m[4] x + ..., z' = m[8] x + ...
#include <array>
#include <cstdint>

#include "seeds/common/volume.hpp"

namespace gi::seeds {

struct Affine {
  std::array<double, 12> m{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};  // the identity

  void apply(double x, double y, double z, double out[3]) const {
    for (int r = 0; r < 3; ++r) out[r] = m[4 * r] * x + m[4 * r + 1] * y + m[4 * r + 2] * z + m[4 * r + 3];
  }
  // The same matrix with every entry rounded to float (what a kernel receives).
  Affine rounded_to_float() const;
};

// A realistic small affine about the image centre c: x' = R S (x - c) + c + t,
// with rotations about the three axes drawn uniformly in +-max_rotation_degrees,
// per-axis scaling in 1 +- max_scaling, translation in +-max_translation voxels.
// Deterministic per (seed, stream).
Affine random_affine(Dim3 dims, double max_rotation_degrees, double max_scaling, double max_translation,
                     std::uint64_t seed, std::uint64_t stream);

}  // namespace gi::seeds
