#pragma once
// CPU helpers shared by the tools seeds (convolutions, gradient conversions,
// reductions, pyramid, intensity tools): the registration steps whose outputs
// feed them, run in double on the CPU so the generated inputs are consistent.
//
// The SSD step of a registration in progress: a T1-like reference image R,
// the same subject seen through a residual smooth displacement d (the part of
// the deformation not yet recovered), resampled trilinearly: W(x) = R(x + d(x))
// (0 outside the image). Its voxel-based SSD gradient with respect to the
// deformation is 2 (W - R) grad W at the active voxels and 0 elsewhere
// (NiftyReg's convention before the voxel-to-node step).
#include <array>
#include <cstdint>
#include <vector>

#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds::tools {

struct SsdStep {
  std::vector<float> reference, warped;  // per voxel
  std::vector<std::int32_t> active;      // sorted linear indices
  std::vector<Float4> gradient;          // per voxel: x, y, z; w = 0
};

// `displacement`: size of the residual displacement in voxels (0 gives W = R
// and a zero gradient).
SsdStep ssd_step(Dim3 dims, MaskShape mask, double displacement, std::uint64_t seed);

// The voxel gradient scaled so that its RMS length over the active voxels is
// `amplitude` (unchanged when it is all zero), with junk in w in [-1000, 1000]
// (a kernel must not read w). Float arithmetic of the scaling is done once here.
std::vector<Float4> scaled_gradient_with_junk(const SsdStep& step, double amplitude, std::uint64_t seed);

// Voxel-centric to node-centric (the adjoint of cubic B-spline interpolation):
// node n gets sum over voxels x of Bx(n, x) By(n, y) Bz(n, z) g(x), with the
// B-spline convention of seeds/common/bspline.hpp (voxel x is influenced by
// nodes floor(x / s) .. floor(x / s) + 3). Only x, y, z of g are used; out[4 n + 3]
// is 0. In double, computed axis by axis. Throws if the grid is too small.
std::vector<double> voxel_to_node(const std::vector<Float4>& gradient, Dim3 image, Dim3 grid,
                                  const std::array<double, 3>& spacing);

// A T1-like image (tissue_image) mapped by scale * value + offset, rounded
// to float: CT-like ranges with negative values for offset < 0.
std::vector<float> intensity_image(Dim3 dims, double scale, double offset, std::uint64_t seed);

// Node gradients (4 doubles per node, as voxel_to_node gives) rounded to
// float4 with junk in w in [-1000, 1000].
std::vector<Float4> nodes_with_junk(const std::vector<double>& nodes, std::uint64_t seed);

// Per-axis B-spline weights that voxel_to_node uses: for each voxel coordinate
// 0 .. dim - 1, the first node it influences and its 4 weights.
struct AxisWeights {
  std::vector<int> first;
  std::vector<std::array<double, 4>> weight;
};
AxisWeights axis_weights(int dim, double spacing);

// The separable convolution of the tools seeds along `axis` (0 = x, 1 = y,
// 2 = z) in double: taps outside the image are dropped and the sum divided by
// the weights actually used (0 if they sum to 0); only x, y, z are convolved,
// out[4 i + 3] = 0. `who` names the reference in errors.
std::vector<double> convolve_axis(const std::vector<Float4>& input, Dim3 dims, const std::vector<float>& weights,
                                  int axis, const char* who);

// Weights of a normalised binomial kernel of 2 radius + 1 taps
// (C(2r, k) / 4^r: radius 2 gives (1, 4, 6, 4, 1) / 16).
std::vector<float> binomial_weights(int radius);

// The generator variable "weights" of the convolution and pyramid generators:
// explicit taps [w_-r .. w_r] (an odd count, at most 129) instead of a
// computed kernel, e.g. [-0.5, 0, 0.5], whose taps sum to exactly 0, so the
// kernels' zero-weight-sum branch runs wherever no tap is cut by the border.
// Empty when the variable is absent; naming "radius" or "sigma" beside it is
// an error (the taps set the radius).
std::vector<float> explicit_weights(const GeneratorArgs& args);

// Output extent of a pyramid level: (dim + 1) / 2, so that output voxel i
// sits on input voxel 2 i.
inline int pyramid_extent(int dim) { return (dim + 1) / 2; }

}  // namespace gi::seeds::tools
