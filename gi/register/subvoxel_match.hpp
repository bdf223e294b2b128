#pragma once
// Block matching (blockmatching/ncc_block_matching) finds whole-voxel
// displacements only. When what is left to find is under half a voxel
// everywhere (a small image, or a rotation of a degree or two near the
// centre), every block answers 0 and an affine fit learns nothing more, so
// the affine stage would stop a voxel short. Each match is refined here to a
// fraction of a voxel: along each axis, the vertex of the parabola through
// the NCC one voxel before, at and one voxel after the best displacement.
#include <array>
#include <vector>

namespace gi::reg {

// The NCC of the 4x4x4 block at `origin` (voxels inside the image only)
// between `reference` and `warped` shifted by `d`; NaN where a shifted voxel
// leaves the image or either side has no variance (as the kernel refuses).
double block_ncc(const std::vector<float>& reference, const std::vector<float>& warped, std::array<int, 3> dim,
                 std::array<int, 3> origin, std::array<int, 3> d);

// The fractional correction (each axis within +-0.5 voxel) to the best
// whole-voxel displacement `d` of the block at `origin`; 0 along an axis
// where a neighbour cannot be scored or the NCC does not peak at `d`.
std::array<double, 3> subvoxel_offset(const std::vector<float>& reference, const std::vector<float>& warped,
                                      std::array<int, 3> dim, std::array<int, 3> origin, std::array<int, 3> d);

}  // namespace gi::reg
