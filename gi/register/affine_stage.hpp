#pragma once
// Affine pre-alignment by block matching, as NiftyReg's reg_aladin does it
// (Ourselin et al. 2001; Modat et al. 2014), before the B-spline stage of
// gi register (gi/register/registration.hpp). At each pyramid level, coarse
// to fine, and each iteration:
//   1. the floating image is resampled through the current transform
//      (`global/affine_deformation`, then `resampling/trilinear`);
//   2. the reference is cut into blocks of 4x4x4 voxels, of which the most
//      textured share (highest intensity variance, chosen once per level)
//      takes part; each is matched by normalised cross-correlation within
//      +-3 voxels of the resampled image (`blockmatching/ncc_block_matching`);
//   3. each match is refined to a fraction of a voxel
//      (gi/register/subvoxel_match.hpp); each block centre and its match,
//      taken back through the current transform, make a point pair in world
//      millimetres, and a least trimmed squares fit (gi/register/affine_fit.hpp)
//      to the best half of them gives the next transform: rigid at the
//      coarsest level, then affine (rigid at every level with --rigid-only).
// A level ends after its iterations or when a fit moves no voxel by more
// than a hundredth of a voxel.
// Every image step is a library kernel; only the fits run on the host.
#include <array>
#include <vector>

#include "gi/register/affine_fit.hpp"
#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_runner.hpp"
#include "gi/register/reference_mask.hpp"
#include "gi/register/registration_options.hpp"

namespace gi::reg {

struct AffineLevelReport {
  int level = 0;  // 0: the finest
  int iterations = 0, blocks = 0, matches = 0, inliers = 0;
  double rms_mm = 0;  // of the last fit's kept pairs
  // Where the level's wall time went, seconds: choosing the blocks (the
  // reference read back, their variances, the block mask sent); the
  // matching (resampling and block matching on the device, the results and
  // the resampled image read back); the sub-voxel refinement and the fits
  // (host).
  double selection_seconds = 0, matching_seconds = 0, refinement_seconds = 0, fit_seconds = 0;
};

struct AffineResult {
  // Reference voxel to floating voxel, at the finest level (each image's own voxels).
  Matrix4 voxel_transform = identity4();
  // Reference world to floating world (mm): reg_aladin's affine text file.
  Matrix4 world_transform = identity4();
  std::vector<AffineLevelReport> levels;
  double seconds = 0;
};

// `references` and `floatings`: the pyramid of both images (level 0 the
// finest, each level half the previous one), intensities in [0, 1], each on
// its own grid (`dims[l]`, `floating_dims[l]`), whose finest voxel-to-world
// matrices are given. The stage starts from the images' headers: the
// identity in world coordinates. `masks` (empty: none): the reference mask
// on every level; a block takes part only when all its voxels are in it.
AffineResult align_affine(const KernelRunner& runner, const std::vector<const Buffer*>& references,
                          const std::vector<const Buffer*>& floatings, const std::vector<std::array<int, 3>>& dims,
                          const std::vector<std::array<int, 3>>& floating_dims, const Matrix4& reference_voxel_to_world,
                          const Matrix4& floating_voxel_to_world, const AffineOptions& options,
                          const std::vector<LevelMask>& masks = {});

// The control-point displacements (float4 per node, in floating voxels) that
// make a grid of `grid_dim` nodes `spacing` voxels apart on an image of a
// level `level` levels above the finest reproduce `voxel_transform` (of the
// finest level) exactly: cubic B-splines reproduce linear functions.
std::vector<float> grid_of_affine(const Matrix4& voxel_transform, int level, std::array<int, 3> grid_dim,
                                  double spacing);

}  // namespace gi::reg
