#pragma once
// CPU side of the B-spline regularisation seeds (bspline_second_derivatives,
// bspline_bending_energy, bspline_bending_energy_gradient,
// bspline_folding_correction): the node stencils in double precision and the
// pieces their generators share.
//
// Grid convention as in seeds/common/bspline.hpp: control point (i, j, k)
// sits at voxel ((i - 1) sx, (j - 1) sy, (k - 1) sz) and holds a displacement.
// At a node the cubic B-spline spans the node and its neighbours at offsets
// -1, 0, +1 per axis with basis values (1/6, 4/6, 1/6), first-derivative
// values (-1/2, 0, 1/2) / spacing and second-derivative values (1, -2, 1) /
// spacing^2, so every derivative at a node is a 27-point stencil.
//
// Border: nodes on the grid's outer layer (index 0 or dim - 1 on any axis)
// have no full stencil. Their second derivatives and bending energy are 0 and
// their Jacobian is the identity (determinant 1: never folded).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"

// In their own namespace: other families' helpers share gi::seeds.
namespace gi::seeds::bending {

using Vec3 = std::array<double, 3>;
using Spacing = std::array<double, 3>;

// The six second derivatives of the displacement at a node, each a Vec3 of
// the x, y, z components, in the kernels' order.
enum SecondDerivativeIndex { kXX = 0, kYY, kZZ, kXY, kYZ, kXZ };
using SecondDerivatives = std::array<Vec3, 6>;

// Row-major J[c][k] = delta_ck + du_c/dx_k (voxel units).
using Matrix3 = std::array<double, 9>;

bool interior_node(Dim3 grid, int i, int j, int k);
std::size_t interior_node_number(Dim3 grid);

// x, y, z of every control point, in double (w dropped).
std::vector<Vec3> displacements(const std::vector<Float4>& points);

// Stencil weights of the control point at per-axis stencil index (a, b, c)
// (0, 1, 2 for offsets -1, 0, +1 from the node).
double second_derivative_weight(int which, int a, int b, int c, const Spacing& spacing);
double first_derivative_weight(int axis, int a, int b, int c, const Spacing& spacing);

// Per node; zero on the border. Throws if points.size() != grid.voxels().
std::vector<SecondDerivatives> node_second_derivatives(const std::vector<Vec3>& points, Dim3 grid,
                                                        const Spacing& spacing);
// xx^2 + yy^2 + zz^2 + 2 (xy^2 + yz^2 + xz^2), summed over the components.
double bending_energy_of(const SecondDerivatives& d);
std::vector<double> node_bending_energy(const std::vector<Vec3>& points, Dim3 grid, const Spacing& spacing);
double total_bending_energy(const std::vector<Vec3>& points, Dim3 grid, const Spacing& spacing);

// d(total energy)/d(control point), from the second-derivative field
// (only interior nodes are read).
std::vector<Vec3> bending_energy_gradient(const std::vector<SecondDerivatives>& second, Dim3 grid,
                                          const Spacing& spacing);

// Per node; the identity on the border.
std::vector<Matrix3> node_jacobians(const std::vector<Vec3>& points, Dim3 grid, const Spacing& spacing);
double determinant(const Matrix3& m);
// cof[3 c + k] = d det / d m[3 c + k].
Matrix3 cofactors(const Matrix3& m);

// The folding correction (bspline_folding_correction): for every control
// point, the gradient of det(J_n) with respect to its displacement summed
// over the interior nodes n of its neighbourhood with determinant[n] <= 0
// (Jacobians recomputed from `points`), then one gradient-ascent step:
// P += step * sum. Returns the moved displacements.
std::vector<Vec3> folding_correction(const std::vector<Vec3>& points, const std::vector<float>& determinant, Dim3 grid,
                                     const Spacing& spacing, double step);

// Local large displacements that fold the transformation: `sites` Gaussian
// bumps (width one control point) at random interior positions, each moving
// about `amplitude` spacings in a random direction.
void add_fold_sites(std::vector<Float4>& points, Dim3 grid, const Spacing& spacing, int sites, double amplitude,
                    std::uint64_t seed);

// What every regularisation generator shares: dim (image size, default
// 217^3), spacing (default 5, rounded to float as the kernel sees it) and
// amplitude (default `default_amplitude` voxels) give a smooth control grid; the derived
// variables are controlPointDimX/Y/Z, controlPointNumber, interiorNodeNumber
// and spacingX/Y/Z. `args` must allow dim, spacing and amplitude.
struct GridWorkload {
  Dim3 grid;
  Spacing spacing{};
  std::vector<Float4> points;
  fitness::Workload workload;  // variables only
};
GridWorkload generate_grid_workload(const GeneratorArgs& args, std::uint64_t seed, double default_amplitude = 3.0);

// The grid dimensions and spacing a reference reads back from a workload;
// errors name `who` (the kernel).
struct GridVariables {
  Dim3 grid;
  Spacing spacing{};
};
GridVariables read_grid_variables(const fitness::Workload& w, const char* who);

}  // namespace gi::seeds::bending
