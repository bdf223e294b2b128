#pragma once
// Block matching by normalised cross-correlation (NCC), in double: what the
// ncc_block_matching reference computes and what its generator uses to keep
// the best match of every block well-defined in float.
//
// Conventions (those of the kernel):
//   - the reference image is split into blocks of 4^3 voxels, block (i, j, k)
//     covering voxels 4i .. 4i + 3 (and so on); there are ceil(dim / 4) blocks
//     per axis, the last ones possibly cut by the image border;
//   - the voxels of a block are those inside the image with mask != 0; a block
//     is used when it has at least `min_voxels` of them and their reference
//     intensities have non-zero variance;
//   - a displacement d (each component in -radius .. radius) is a candidate
//     when every voxel v of the block has v + d inside the image and the
//     warped intensities at v + d have non-zero variance (here: above 1e-12
//     of their sum of squares, i.e. non-zero up to rounding); its NCC is
//     sum (r - mean r)(w - mean w) / sqrt(sum (r - mean r)^2 sum (w - mean w)^2);
//   - the best candidate has the highest NCC; ties go to the first in the
//     order dz, dy, dx from -radius (dx fastest).
#include <array>
#include <cstdint>
#include <vector>

#include "seeds/common/smooth_noise.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds {

constexpr int kMatchBlockSize = 4;
// The NCC written for a block that is not used or has no candidate (NCC
// itself lies in [-1, 1]); its displacement is written as (0, 0, 0).
constexpr double kNoMatchNcc = -2.0;

struct BlockMatch {
  int voxels = 0;  // voxels of the block inside the image and the mask
  bool used = false;
  int displacement[3] = {0, 0, 0};  // the best candidate (0 where none)
  double ncc = kNoMatchNcc;         // its NCC, or kNoMatchNcc
  double runner_up = kNoMatchNcc;   // the second highest candidate NCC, or kNoMatchNcc
};

// The smooth displacement by which the block-matching generator moves the
// reference image: value noise of about `amplitude` voxels per axis,
// correlated over a third of the image (at least 16 voxels), like the
// residual of an affine registration.
class BlockMatchDisplacement {
 public:
  BlockMatchDisplacement(Dim3 dims, double amplitude, std::uint64_t seed);
  // x, y, z inside the dims given at construction.
  std::array<double, 3> at(int x, int y, int z) const {
    return {amplitude_ * x_.at(x, y, z), amplitude_ * y_.at(x, y, z), amplitude_ * z_.at(x, y, z)};
  }

 private:
  double amplitude_;
  SmoothNoise x_, y_, z_;
};

// The warped image W(x) = |R(x + u(x)) + noise|: the reference resampled
// trilinearly (0 outside) at the displaced positions, plus Gaussian noise of
// standard deviation `noise`, kept >= 0 like a magnitude image.
std::vector<float> block_matching_warped_image(const std::vector<float>& reference, Dim3 dims,
                                               const BlockMatchDisplacement& u, double noise, std::uint64_t seed);

// ceil(dim / 4) per axis.
Dim3 match_block_dims(Dim3 image);

// One result per block (x fastest). Throws when the sizes disagree.
std::vector<BlockMatch> ncc_block_search(const std::vector<float>& reference, const std::vector<float>& warped,
                                         const std::vector<std::int32_t>& mask, Dim3 dims, int min_voxels, int radius);

}  // namespace gi::seeds
