#pragma once
// The reference mask of gi register (--rmask, as reg_f3d's and reg_aladin's):
// the reference voxels that the similarity measure and the affine stage's
// block selection use. A voxel is in where the mask image is nonzero. The
// mask's pyramid is made as the images' (gi/register/image_pyramid.hpp) and,
// as NiftyReg thresholds its downsampled mask, a coarser level's voxel is in
// where the smoothed mask is at least one half.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gi/register/kernel_runner.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {

// One byte per voxel of a pyramid level, x fastest: 1 in the mask, 0 out.
using LevelMask = std::vector<std::uint8_t>;

// Throws std::runtime_error naming `mask_name` and the problem: not a scalar
// image, another voxel grid than the reference's (sizes or voxel-to-world
// matrix), a value that is not finite, or no voxel in the mask.
void check_reference_mask(const Volume& mask, const Volume& reference, const std::string& mask_name = "the reference mask",
                          const std::string& reference_name = "the reference image");

// The mask on every level of `dims` (finest first, pyramid_dims). Throws
// std::runtime_error, naming `mask_name`, when a level keeps no voxel.
std::vector<LevelMask> mask_pyramid(const KernelRunner& runner, const Volume& mask,
                                    const std::vector<std::array<int, 3>>& dims,
                                    const std::string& mask_name = "the reference mask");

// The image indices of the voxels in `mask`, ascending: the kernels' active-voxel list.
std::vector<int> voxels_in(const LevelMask& mask);

// That list on the device: the voxels of `mask`, or without one every
// voxel of an image of `voxels` (0, 1, 2, ...). Its element count is
// bytes() / 4.
Buffer active_voxel_list(ComputeDevice& device, std::size_t voxels, const LevelMask* mask = nullptr);

}  // namespace gi::reg
