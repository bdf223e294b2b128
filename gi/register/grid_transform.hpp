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

#include "gi/register/compute_device.hpp"
#include "gi/register/level_solver.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {

// The grid a control-point spacing (voxels) gives an image of `dim` voxels:
// ceil(dim / spacing) + 3 nodes per axis, node (i, j, k) at voxel
// ((i - 1) * spacing, ...), so every voxel has its 4 x 4 x 4 nodes.
std::array<int, 3> grid_dim_for(std::array<int, 3> dim, double spacing);

// The launch variables of the kernels on an image of `dim` voxels with a
// grid of `spacing` voxels: sizes, counts and spacing (the histogram's are
// the level solver's).
fitness::Variables level_variables(std::array<int, 3> dim, double spacing);

class GridTransform {
 public:
  // `grid`: float4 displacements (voxels) per node of grid_dim_for(dim, spacing).
  GridTransform(const KernelRunner& runner, std::array<int, 3> dim, double spacing, const Buffer& grid);
  // The floating voxel position each reference voxel maps to (float4 per voxel).
  const Buffer& deformation() const { return deformation_; }
  // `image` (of the reference's size) resampled through the deformation, trilinear.
  std::vector<float> warp(const Buffer& image) const;
  // The displacement (voxels) as a 3-component volume on `reference`'s grid.
  Volume displacement(const Volume& reference) const;

 private:
  const KernelRunner& runner_;
  std::size_t voxels_;
  fitness::Variables vars_;
  Buffer active_, deformation_;
};

// The grid as a NIfTI vector image of its own: its voxels are the nodes,
// `spacing` reference voxels apart, the first one voxel's spacing before
// the reference's origin; values are displacements in reference voxels.
Volume control_point_volume(const std::vector<float>& float4_nodes, std::array<int, 3> grid_dim,
                            const Volume& reference, double spacing);

struct ControlPointGrid {
  std::array<int, 3> dim{};
  double spacing = 0;              // in reference voxels, the same along every axis
  std::vector<float> float4_nodes;  // what GridTransform takes
};

// Reads back what control_point_volume made. Throws NiftiError naming
// `grid_file` when it does not fit `reference`: node spacing not the same
// whole-or-fractional multiple of the reference's voxel size along every
// axis, a node count other than grid_dim_for gives, an origin or axes other
// than the reference's.
ControlPointGrid control_point_grid(const Volume& grid, const std::filesystem::path& grid_file,
                                    const Volume& reference, const std::filesystem::path& reference_file);

// The deformation in world millimetres (NiftyReg's convention): where each
// reference voxel's point lies, through `displacement`'s voxel-to-world.
Volume world_deformation(const Volume& displacement);

}  // namespace gi::reg
