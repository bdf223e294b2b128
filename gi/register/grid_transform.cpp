#include "gi/register/grid_transform.hpp"
#include "gi/register/reference_mask.hpp"

#include <cmath>
#include <sstream>

namespace gi::reg {

std::array<int, 3> grid_dim_for(std::array<int, 3> dim, double spacing) {
  std::array<int, 3> g{};
  for (int a = 0; a < 3; ++a) g[a] = static_cast<int>(std::ceil(dim[a] / spacing)) + 3;
  return g;
}

fitness::Variables level_variables(std::array<int, 3> dim, double spacing, std::array<int, 3> floating_dim) {
  const std::array<int, 3> grid = grid_dim_for(dim, spacing);
  const double n = static_cast<double>(product(dim));
  const double jacobian_nodes = double(grid[0] - 2) * (grid[1] - 2) * (grid[2] - 2);
  return {{"imageDimX", dim[0]}, {"imageDimY", dim[1]}, {"imageDimZ", dim[2]},
          {"floatingDimX", floating_dim[0]}, {"floatingDimY", floating_dim[1]}, {"floatingDimZ", floating_dim[2]},
          {"voxelNumber", n}, {"activeVoxelNumber", n}, {"referenceVoxelNumber", n},
          {"floatingVoxelNumber", static_cast<double>(product(floating_dim))},
          {"controlPointDimX", grid[0]}, {"controlPointDimY", grid[1]}, {"controlPointDimZ", grid[2]},
          {"controlPointNumber", static_cast<double>(product(grid))},
          {"jacobianNodeNumber", jacobian_nodes},
          {"spacingX", spacing}, {"spacingY", spacing}, {"spacingZ", spacing}, {"paddingValue", 0}};
}

GridTransform::GridTransform(const KernelRunner& runner, std::array<int, 3> dim, double spacing, const Buffer& grid,
                             std::array<int, 3> target_dim)
    : runner_(runner), voxels_(product(dim)), vars_(level_variables(dim, spacing, target_dim)) {
  deform(grid);
}

GridTransform::GridTransform(const KernelRunner& runner, std::array<int, 3> dim, const ControlPointGrid& grid,
                             std::array<int, 3> target_dim)
    : runner_(runner), voxels_(product(dim)), vars_(level_variables(dim, grid.spacing, target_dim)) {
  Buffer nodes(runner.device(), grid.float4_nodes.size() * 4);
  nodes.upload(grid.float4_nodes);
  deform(nodes);
}

void GridTransform::deform(const Buffer& grid) {
  ComputeDevice& d = runner_.device();
  active_ = active_voxel_list(d, voxels_);  // every voxel: no mask
  deformation_ = Buffer(d, voxels_ * 16);
  runner_.run("bspline/deformation_field",
              {{"controlPointGrid", &grid}, {"activeVoxels", &active_}, {"deformationField", &deformation_}}, vars_);
}

std::vector<float> GridTransform::warp(const Buffer& image) const {
  Buffer warped(runner_.device(), voxels_ * 4);
  runner_.run("resampling/trilinear",
              {{"floatingImage", &image}, {"deformationField", &deformation_}, {"activeVoxels", &active_},
               {"warpedImage", &warped}},
              vars_);
  return warped.download<float>();
}

namespace {

Volume vector_volume(std::array<int, 3> dim, const Volume& like) {
  Volume v;
  v.dim = dim;
  v.components = 3;
  v.spacing = like.spacing;
  v.voxel_to_world = like.voxel_to_world;
  v.data.assign(3 * v.voxels(), 0.f);
  return v;
}

// float4 per element (the kernels' layout) to NIfTI's one plane per component.
void planes_from_float4(const std::vector<float>& float4, Volume& v) {
  const std::size_t n = v.voxels();
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) v.data[c * n + i] = float4[4 * i + c];
}

std::string fmt(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

Volume GridTransform::displacement(const Volume& reference) const {
  Buffer displacement(runner_.device(), deformation_.bytes());
  runner_.run("deformation/deformation_to_displacement",
              {{"deformationField", &deformation_}, {"displacementField", &displacement}}, vars_);
  Volume v = vector_volume(reference.dim, reference);
  planes_from_float4(displacement.download<float>(), v);
  return v;
}

namespace {

// Node (i, j, k) of a grid `spacing` voxels apart sits at voxel (i - 1) * spacing.
Point3 node_position(std::size_t node, std::array<int, 3> grid_dim, double spacing) {
  const std::size_t x = node % grid_dim[0], y = (node / grid_dim[0]) % grid_dim[1], z = node / (std::size_t(grid_dim[0]) * grid_dim[1]);
  return {(double(x) - 1) * spacing, (double(y) - 1) * spacing, (double(z) - 1) * spacing};
}

}  // namespace

Volume control_point_volume(const std::vector<float>& float4_nodes, std::array<int, 3> grid_dim,
                            const Volume& reference, const Matrix4& target_voxel_to_world, double spacing) {
  Volume v = vector_volume(grid_dim, reference);
  auto& m = v.voxel_to_world;
  for (int r = 0; r < 3; ++r) {
    m[r][3] = reference.voxel_to_world[r][3];
    for (int c = 0; c < 3; ++c) {
      m[r][c] = reference.voxel_to_world[r][c] * spacing;
      m[r][3] -= reference.voxel_to_world[r][c] * spacing;
    }
    v.spacing[r] = reference.spacing[r] * spacing;
  }
  const std::size_t n = product(grid_dim);
  for (std::size_t i = 0; i < n; ++i) {
    const Point3 p = node_position(i, grid_dim, spacing);
    const Point3 target = {p[0] + float4_nodes[4 * i], p[1] + float4_nodes[4 * i + 1], p[2] + float4_nodes[4 * i + 2]};
    const Point3 to = transform_point(target_voxel_to_world, target), from = transform_point(reference.voxel_to_world, p);
    for (int c = 0; c < 3; ++c) v.data[c * n + i] = static_cast<float>(to[c] - from[c]);
  }
  return v;
}

ControlPointGrid control_point_grid(const Volume& grid, const std::filesystem::path& grid_file,
                                    const Volume& reference, const std::filesystem::path& reference_file,
                                    const Matrix4& target_voxel_to_world) {
  const std::string against = " (reference " + reference_file.string() + ")";
  if (grid.components != 3) throw NiftiError(grid_file, "a control-point grid is a 3-component vector image");
  ControlPointGrid g;
  g.dim = grid.dim;
  g.spacing = grid.spacing[0] / reference.spacing[0];
  for (int a = 0; a < 3; ++a) {
    const double s = grid.spacing[a] / reference.spacing[a];
    if (!(std::abs(s - g.spacing) <= 1e-4 * g.spacing) || !(s >= 1))
      throw NiftiError(grid_file, "node spacing " + fmt(grid.spacing[0]) + " x " + fmt(grid.spacing[1]) + " x " +
                                      fmt(grid.spacing[2]) + " mm is not one multiple (at least 1) of the reference's "
                                      "voxel size along every axis" + against);
  }
  const std::array<int, 3> expected = grid_dim_for(reference.dim, g.spacing);
  if (grid.dim != expected)
    throw NiftiError(grid_file, "holds " + std::to_string(grid.dim[0]) + "x" + std::to_string(grid.dim[1]) + "x" +
                                    std::to_string(grid.dim[2]) + " nodes; a spacing of " + fmt(g.spacing) +
                                    " voxels on this reference needs " + std::to_string(expected[0]) + "x" +
                                    std::to_string(expected[1]) + "x" + std::to_string(expected[2]) + against);
  const Volume like = control_point_volume(std::vector<float>(4 * product(grid.dim), 0.f), grid.dim, reference,
                                           reference.voxel_to_world, g.spacing);
  double scale = 1, error = 0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      scale = std::max(scale, std::abs(like.voxel_to_world[r][c]));
      error = std::max(error, std::abs(like.voxel_to_world[r][c] - grid.voxel_to_world[r][c]));
    }
  if (error > 1e-4 * scale)
    throw NiftiError(grid_file, "its voxel-to-world does not put node (1, 1, 1) on the reference's first voxel "
                                "with the reference's axes" + against);
  const Matrix4 to_target = inverse(target_voxel_to_world);
  const std::size_t n = product(grid.dim);
  g.float4_nodes.assign(4 * n, 0.f);
  for (std::size_t i = 0; i < n; ++i) {
    const Point3 p = node_position(i, grid.dim, g.spacing);
    Point3 world = transform_point(reference.voxel_to_world, p);
    for (int c = 0; c < 3; ++c) world[c] += grid.data[c * n + i];
    const Point3 target = transform_point(to_target, world);
    for (int c = 0; c < 3; ++c) g.float4_nodes[4 * i + c] = static_cast<float>(target[c] - p[c]);
  }
  return g;
}

Volume world_deformation(const Volume& displacement) {
  Volume d = displacement;
  const std::size_t n = d.voxels();
  const auto& m = displacement.voxel_to_world;
  for (int z = 0; z < d.dim[2]; ++z)
    for (int y = 0; y < d.dim[1]; ++y)
      for (int x = 0; x < d.dim[0]; ++x) {
        const std::size_t i = d.index(x, y, z);
        const double p[3] = {x + displacement.data[i], y + displacement.data[n + i], z + displacement.data[2 * n + i]};
        for (int r = 0; r < 3; ++r)
          d.data[r * n + i] = static_cast<float>(m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3]);
      }
  return d;
}

}  // namespace gi::reg
