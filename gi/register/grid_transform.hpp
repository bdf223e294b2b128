#pragma once
// A control-point grid applied to a reference voxel grid with the library's
// kernels: the dense deformation it gives and an image resampled through it.
// The registration's last step and `gi transform` share this code, so the
// fields `gi transform` makes from a written grid are the ones `gi register`
// would have written itself. Also the grid's own NIfTI form (what gi register
// writes, as reg_f3d writes its control-point grid) and its reading back.
#include <array>
#include <filesystem>
#include <vector>

#include "gi/register/affine_fit.hpp"
#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_runner.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {

// The grid a control-point spacing (voxels) gives an image of `dim` voxels:
// ceil(dim / spacing) + 3 nodes per axis, node (i, j, k) at voxel
// ((i - 1) * spacing, ...), so every voxel has its 4 x 4 x 4 nodes.
std::array<int, 3> grid_dim_for(std::array<int, 3> dim, double spacing);

// The launch variables of the kernels on a reference image of `dim` voxels
// with a grid of `spacing` voxels and a floating image of `floating_dim`
// voxels: sizes, counts and spacing (the histogram's are the level solver's).
fitness::Variables level_variables(std::array<int, 3> dim, double spacing, std::array<int, 3> floating_dim);

struct ControlPointGrid {
  std::array<int, 3> dim{};
  double spacing = 0;               // in reference voxels, the same along every axis
  std::vector<float> float4_nodes;  // what GridTransform takes, for the target asked for
};

// Units. The registration's grid holds, per node, where its point goes in the
// floating image's voxels minus the node's position in the reference's
// voxels (the two grids may differ); the kernels make of it the floating
// voxel position of every reference voxel. The same arithmetic with the
// reference's voxels as the target gives displacements in reference voxels.
class GridTransform {
 public:
  // `grid`: float4 per node of grid_dim_for(dim, spacing), in the units above
  // for a target image of `target_dim` voxels.
  GridTransform(const KernelRunner& runner, std::array<int, 3> dim, double spacing, const Buffer& grid,
                std::array<int, 3> target_dim);
  // The same from a grid read back by control_point_grid for that target.
  GridTransform(const KernelRunner& runner, std::array<int, 3> dim, const ControlPointGrid& grid,
                std::array<int, 3> target_dim);
  // The target voxel position each reference voxel maps to (float4 per voxel).
  const Buffer& deformation() const { return deformation_; }
  // `image` (the target, of target_dim voxels) resampled through the deformation, trilinear.
  std::vector<float> warp(const Buffer& image) const;
  // The deformation minus each voxel's position, as a 3-component volume on
  // `reference`'s grid: a displacement in reference voxels when the grid's
  // target is the reference's own voxels.
  Volume displacement(const Volume& reference) const;

 private:
  void deform(const Buffer& grid);  // the deformation of `grid`, once
  const KernelRunner& runner_;
  std::size_t voxels_;
  fitness::Variables vars_;
  Buffer active_, deformation_;
};

// The grid as a NIfTI vector image of its own: its voxels are the nodes,
// `spacing` reference voxels apart, the first one a spacing before the
// reference's first voxel; each holds a displacement in world millimetres:
// node point p (world Vr p) maps to world Vr p + value. `float4_nodes` is the
// registration's grid, whose target voxels are `target_voxel_to_world`'s.
Volume control_point_volume(const std::vector<float>& float4_nodes, std::array<int, 3> grid_dim,
                            const Volume& reference, const Matrix4& target_voxel_to_world, double spacing);


// Reads back what control_point_volume made, for the target image whose
// voxel-to-world is `target_voxel_to_world` (the floating image's to resample
// it; the reference's for displacements in reference voxels). Throws
// NiftiError naming `grid_file` when it does not fit `reference`: node
// spacing not one multiple of the reference's voxel size along every axis,
// a node count other than grid_dim_for gives, an origin or axes other than
// the reference's.
ControlPointGrid control_point_grid(const Volume& grid, const std::filesystem::path& grid_file,
                                    const Volume& reference, const std::filesystem::path& reference_file,
                                    const Matrix4& target_voxel_to_world);

// The deformation in world millimetres (NiftyReg's convention): where each
// reference voxel's point lies, through `displacement`'s voxel-to-world.
Volume world_deformation(const Volume& displacement);

}  // namespace gi::reg
