#pragma once
// Dense deformation fields for the deformation family's generators: the
// deformation of a registration in progress at every voxel of the reference
// image, in voxel space - an affine part (seeds/global/global_support.hpp)
// plus a cubic B-spline displacement on a control grid of the given spacing
// (the B-spline seeds' convention, seeds/common/bspline.hpp):
//   deformation(x) = affine(x) + d(x),   d = B-spline interpolation of the grid.
// The B-spline is evaluated separably (one axis at a time), which computes
// the same tensor-product sum as bspline_deformation (in another order) in a
// fraction of the time, so a dense 217^3 field takes well under a second.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"
#include "seeds/global/global_support.hpp"

namespace gi::seeds {

// Calls sink(voxel index, x, y, z, displacement[3]) once per voxel of
// `image`, from several threads, with the B-spline displacement of `grid`
// (control_grid_dims(image, spacing) points). Throws if the grid is too small.
void dense_bspline_displacement(
    const std::vector<Float4>& grid, Dim3 grid_dims, Dim3 image, const std::array<double, 3>& spacing,
    const std::function<void(std::size_t index, int x, int y, int z, const double* displacement)>& sink);

struct DenseFieldOptions {
  std::array<double, 3> spacing{5, 5, 5};  // control point spacing in voxels
  double amplitude = 3;                    // B-spline displacement size in voxels
  Affine affine;                           // the affine part (identity by default)
};

// The deformation (w = 0) at every voxel, computed in double and rounded
// once to float. `seed` selects the control grid (smooth_control_grid).
std::vector<Float4> dense_deformation(Dim3 image, const DenseFieldOptions& options, std::uint64_t seed);

// The same field as a displacement (deformation minus voxel position),
// computed in double and rounded once to float.
std::vector<Float4> dense_displacement(Dim3 image, const DenseFieldOptions& options, std::uint64_t seed);

// Reads the options shared by the dense-field generators from their
// variables: spacing (default 5), amplitude (default 3), and the affine part
// from rotation (degrees, default 3), scaling (default 0.03) and translation
// (voxels, default 2), drawn with `seed` on `affine_stream`.
DenseFieldOptions dense_field_options(const GeneratorArgs& args, Dim3 image, std::uint64_t seed,
                                      std::uint64_t affine_stream);

// A workload image size for a dense field: every axis at least 2 voxels (the
// Jacobian's finite differences need a neighbour); throws naming the generator.
Dim3 dense_field_dims(const GeneratorArgs& args);

}  // namespace gi::seeds
