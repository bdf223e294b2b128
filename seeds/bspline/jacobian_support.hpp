#pragma once
// Jacobians of cubic B-spline free-form deformations in voxel space (the
// convention of seeds/common/bspline.hpp) and the log-Jacobian penalty with
// its gradient, in double: the judges of the jacobian_nodes,
// jacobian_voxels, log_jacobian_penalty and log_jacobian_gradient_* seeds,
// and the CPU steps their generators run to produce consistent inputs.
//
// The deformation is identity + displacement, so its Jacobian is
// I + d(displacement)/dx. Matrices are row-major, 9 values:
// m[3 * r + c] = d(deformation_r) / d(x_c) (r: component x, y, z; c: the
// direction of the derivative), in voxels per voxel.
//
// Nodes: the approximate Jacobian is evaluated at the interior control
// points (1..n-2 on every axis), where all 27 neighbours exist and the
// B-spline has u = 0: basis (1/6, 4/6, 1/6) and derivative (-1/2, 0, 1/2) /
// spacing for the neighbours at offsets -1, 0, +1. Interior node (i, j, k)
// has number ((k - 1) * (ny - 2) + j - 1) * (nx - 2) + i - 1. The border
// control points carry no node of their own: with p = floor(x / s) the
// interior nodes sit at voxels 0, s, 2 s, ... up to one spacing beyond the
// image, so they cover the image and nothing else. Border control points
// still receive penalty gradient from their interior neighbours.
//
// Penalty: (ln det J)^2 per node or active voxel; a fold (det <= 0) counts
// kFoldPenalty and contributes no gradient (the penalty is flat there).
#include <array>
#include <cstdint>
#include <vector>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds::jacobian {

using Matrix = std::array<double, 9>;
using Spacing = std::array<double, 3>;

// What a folded node or voxel counts in the penalty; the kernels use the same
// constant (1000.0f): larger than (ln det)^2 for every det in [2e-14, 5e13].
inline constexpr double kFoldPenalty = 1000.0;

// The interior nodes of a control grid: (nx - 2, ny - 2, nz - 2).
Dim3 interior_nodes(Dim3 grid);

double determinant(const Matrix& m);
// (ln det m)^2, or kFoldPenalty when det <= 0.
double log_jacobian_penalty(const Matrix& m);
// The derivative of (ln det m)^2 with respect to m: 2 ln(det m) m^{-T}
// (row-major), or zeros when det <= 0.
Matrix log_jacobian_term(const Matrix& m);

// The cubic B-spline basis and its first derivative (d/du) at u in [0, 1).
void bspline_basis_derivative(double u, double basis[4], double derivative[4]);

// Approximate Jacobian at interior node (i, j, k) (each in 1..n-2).
Matrix node_jacobian(const std::vector<Float4>& grid, Dim3 grid_dims, const Spacing& spacing, int i, int j, int k);

// Approximate Jacobian at every interior node, in interior-node order.
// Throws std::runtime_error when the grid size does not match its dims or an
// axis has fewer than 3 control points.
std::vector<Matrix> node_jacobians(const std::vector<Float4>& grid, Dim3 grid_dims, const Spacing& spacing);

// Exact Jacobian at every active voxel (64 control points each), in active
// order. Throws like bspline_deformation for a grid too small for the image.
std::vector<Matrix> voxel_jacobians(const std::vector<Float4>& grid, Dim3 grid_dims, Dim3 image,
                                    const Spacing& spacing, const std::vector<std::int32_t>& active);

// Gradient of sum over interior nodes of (ln det J_n)^2 with respect to every
// control point, from the nodes' Jacobians (J_n depends linearly on its 27
// neighbours): out[4 * m + r] for component r, w = 0.
std::vector<double> node_penalty_gradient(const std::vector<Matrix>& node_matrices, Dim3 grid_dims,
                                          const Spacing& spacing);

// Gradient of sum over active voxels of (ln det J_v)^2 with respect to every
// control point, gathered from the per-voxel terms 2 ln(det J_v) J_v^{-T}
// (`terms`, 9 per active voxel) with the voxels' basis-derivative weights;
// `voxel_to_active` maps every image voxel to its active number or -1.
// out[4 * m + r], w = 0.
std::vector<double> voxel_penalty_gradient(const std::vector<float>& terms, const std::vector<std::int32_t>& voxel_to_active,
                                           Dim3 image, Dim3 grid_dims, const Spacing& spacing);

// Smooth random control-point displacements (smooth_control_grid) with
// `folds` local inversions added: each a compression along one random axis
// about a random centre (compact, 3 control points in radius) strong enough
// to fold a few nodes. With min_node_margin > 0 each fold is placed (and the
// whole field redrawn if needed, deterministically) so that no interior
// node's approximate determinant lies within min_node_margin of 0: float and
// double then agree on which nodes fold, and ln det stays well conditioned.
// Throws std::runtime_error when 64 draws do not manage.
std::vector<Float4> jacobian_control_grid(Dim3 grid_dims, const Spacing& spacing, double amplitude, int folds,
                                          double min_node_margin, std::uint64_t seed);

// ------------------------------------------------- generators and references
// The generator variables every jacobian generator reads (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3)
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   amplitude: a             displacement size in voxels (default 3)
//   folds: f                 local inversions added (0..16, default 0)
struct GridSetup {
  Dim3 image, grid;
  Spacing spacing{};  // as the kernels' floats see them
  double amplitude = 0;
  int folds = 0;
};
GridSetup read_grid_setup(const GeneratorArgs& args);

// Sets the derived variables imageDimX/Y/Z, voxelNumber, spacingX/Y/Z,
// controlPointDimX/Y/Z, controlPointNumber and jacobianNodeNumber.
void add_grid_variables(fitness::Workload& w, const GridSetup& setup);
// Reads them back for a reference; throws naming `who` and a missing variable.
GridSetup grid_variables(const fitness::Workload& w, const char* who);

// The smallest |det| of a node Jacobian that generators of node workloads
// allow (jacobian_control_grid's min_node_margin).
inline constexpr double kNodeMargin = 0.02;

}  // namespace gi::seeds::jacobian
