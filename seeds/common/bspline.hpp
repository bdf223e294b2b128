#pragma once
// Cubic B-spline free-form deformations in voxel space, as the B-spline
// seeds define them: control point (i, j, k) sits at voxel
// ((i - 1) sx, (j - 1) sy, (k - 1) sz); voxel x is influenced by control
// points p .. p + 3 with p = floor(x / sx) and weights from u = x / sx - p.
// Used by the B-spline reference (the judge) and by generators that need
// realistic deformation fields (trilinear resampling).
#include <array>
#include <cstdint>
#include <vector>

#include "seeds/common/volume.hpp"

namespace gi::seeds {

// Control points per axis the kernel needs: floor((dim - 1) / spacing) + 4,
// computed both in double and in the float arithmetic the kernel uses, and
// the larger taken (they differ only when a quotient rounds onto an integer).
Dim3 control_grid_dims(Dim3 image, const std::array<double, 3>& spacing);

// Smooth random displacements (x, y, z; w = 0) of about `amplitude` voxels:
// a smooth field over the grid plus a little per-point jitter.
std::vector<Float4> smooth_control_grid(Dim3 grid, double amplitude, std::uint64_t seed);

// The cubic B-spline basis at u in [0, 1).
inline void bspline_basis(double u, double basis[4]) {
  const double v = 1.0 - u;
  basis[0] = v * v * v / 6.0;
  basis[1] = (3.0 * u * u * u - 6.0 * u * u + 4.0) / 6.0;
  basis[2] = (-3.0 * u * u * u + 3.0 * u * u + 3.0 * u + 1.0) / 6.0;
  basis[3] = u * u * u / 6.0;
}

// Deformation (voxel position + interpolated displacement; w = 0) at every
// active voxel, in double: out[4 * i + c]. Throws std::runtime_error if the
// grid is too small for the image or an active index lies outside it.
std::vector<double> bspline_deformation(const std::vector<Float4>& grid, Dim3 grid_dims, Dim3 image,
                                        const std::array<double, 3>& spacing,
                                        const std::vector<std::int32_t>& active);

}  // namespace gi::seeds
