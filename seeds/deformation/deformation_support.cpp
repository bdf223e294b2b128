#include "seeds/deformation/deformation_support.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"

namespace gi::seeds {

namespace {

// Per voxel along one axis: the first control point and its 4 weights.
struct AxisBasis {
  int first;
  double weight[4];
};

std::vector<AxisBasis> axis_basis(int extent, double spacing, int points, int axis) {
  std::vector<AxisBasis> out(static_cast<std::size_t>(extent));
  for (int v = 0; v < extent; ++v) {
    const double g = v / spacing;
    const int p = static_cast<int>(std::floor(g));
    if (p + 3 >= points)
      throw std::runtime_error("dense_bspline_displacement: axis " + std::to_string(axis) + " needs " +
                               std::to_string(p + 4) + " control points, the grid has " + std::to_string(points));
    out[static_cast<std::size_t>(v)].first = p;
    bspline_basis(g - p, out[static_cast<std::size_t>(v)].weight);
  }
  return out;
}

}  // namespace

void dense_bspline_displacement(
    const std::vector<Float4>& grid, Dim3 grid_dims, Dim3 image, const std::array<double, 3>& spacing,
    const std::function<void(std::size_t index, int x, int y, int z, const double* displacement)>& sink) {
  if (grid.size() != grid_dims.voxels())
    throw std::runtime_error("dense_bspline_displacement: the grid holds " + std::to_string(grid.size()) +
                             " points, its dimensions say " + std::to_string(grid_dims.voxels()));
  const auto bx = axis_basis(image.x, spacing[0], grid_dims.x, 0);
  const auto by = axis_basis(image.y, spacing[1], grid_dims.y, 1);
  const auto bz = axis_basis(image.z, spacing[2], grid_dims.z, 2);
  const std::size_t X = static_cast<std::size_t>(image.x), Y = static_cast<std::size_t>(image.y);
  const std::size_t GX = static_cast<std::size_t>(grid_dims.x), GY = static_cast<std::size_t>(grid_dims.y),
                    GZ = static_cast<std::size_t>(grid_dims.z);
  // Pass 1, along x: t1[(k * GY + j) * X + x] = sum_a bx[x][a] grid[k][j][px + a].
  std::vector<double> t1(3 * GZ * GY * X);
  parallel_for(GZ * GY * X, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      const std::size_t x = e % X, row = e / X;
      const AxisBasis& b = bx[x];
      double sum[3] = {0, 0, 0};
      for (int a = 0; a < 4; ++a) {
        const Float4& p = grid[row * GX + static_cast<std::size_t>(b.first + a)];
        sum[0] += b.weight[a] * p.x;
        sum[1] += b.weight[a] * p.y;
        sum[2] += b.weight[a] * p.z;
      }
      for (int c = 0; c < 3; ++c) t1[3 * e + static_cast<std::size_t>(c)] = sum[c];
    }
  });
  // Pass 2, along y: t2[(k * Y + y) * X + x] = sum_b by[y][b] t1[(k * GY + py + b) * X + x].
  std::vector<double> t2(3 * GZ * Y * X);
  parallel_for(GZ * Y * X, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      const std::size_t x = e % X, y = (e / X) % Y, k = e / (X * Y);
      const AxisBasis& b = by[y];
      double sum[3] = {0, 0, 0};
      for (int i = 0; i < 4; ++i) {
        const double* q = &t1[3 * ((k * GY + static_cast<std::size_t>(b.first + i)) * X + x)];
        for (int c = 0; c < 3; ++c) sum[c] += b.weight[i] * q[c];
      }
      for (int c = 0; c < 3; ++c) t2[3 * e + static_cast<std::size_t>(c)] = sum[c];
    }
  });
  t1 = {};
  // Pass 3, along z, straight to the sink.
  parallel_for(image.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      const std::size_t x = e % X, y = (e / X) % Y, z = e / (X * Y);
      const AxisBasis& b = bz[z];
      double sum[3] = {0, 0, 0};
      for (int i = 0; i < 4; ++i) {
        const double* q = &t2[3 * ((static_cast<std::size_t>(b.first + i) * Y + y) * X + x)];
        for (int c = 0; c < 3; ++c) sum[c] += b.weight[i] * q[c];
      }
      sink(e, static_cast<int>(x), static_cast<int>(y), static_cast<int>(z), sum);
    }
  });
}

namespace {

std::vector<Float4> dense_field(Dim3 image, const DenseFieldOptions& o, std::uint64_t seed, bool displacement) {
  const Dim3 grid_dims = control_grid_dims(image, o.spacing);
  const std::vector<Float4> grid = smooth_control_grid(grid_dims, o.amplitude, seed);
  std::vector<Float4> out(image.voxels());
  dense_bspline_displacement(grid, grid_dims, image, o.spacing,
                             [&](std::size_t index, int x, int y, int z, const double* d) {
                               double p[3];
                               o.affine.apply(x, y, z, p);
                               const double v[3] = {p[0] + d[0], p[1] + d[1], p[2] + d[2]};
                               Float4& f = out[index];
                               f.x = static_cast<float>(displacement ? v[0] - x : v[0]);
                               f.y = static_cast<float>(displacement ? v[1] - y : v[1]);
                               f.z = static_cast<float>(displacement ? v[2] - z : v[2]);
                               f.w = 0.0f;
                             });
  return out;
}

}  // namespace

std::vector<Float4> dense_deformation(Dim3 image, const DenseFieldOptions& options, std::uint64_t seed) {
  return dense_field(image, options, seed, false);
}

std::vector<Float4> dense_displacement(Dim3 image, const DenseFieldOptions& options, std::uint64_t seed) {
  return dense_field(image, options, seed, true);
}

DenseFieldOptions dense_field_options(const GeneratorArgs& args, Dim3 image, std::uint64_t seed,
                                      std::uint64_t affine_stream) {
  DenseFieldOptions o;
  o.spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  o.amplitude = args.number("amplitude", 3.0, 0.0, 50.0);
  const double rotation = args.number("rotation", 3.0, 0.0, 45.0);
  const double scaling = args.number("scaling", 0.03, 0.0, 0.5);
  const double translation = args.number("translation", 2.0, 0.0, 100.0);
  o.affine = random_affine(image, rotation, scaling, translation, seed, affine_stream);
  return o;
}

Dim3 dense_field_dims(const GeneratorArgs& args) {
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  if (image.x < 2 || image.y < 2 || image.z < 2)
    args.fail("dim", "every axis needs at least 2 voxels (the finite differences need a neighbour)");
  return image;
}

// ------------------------------------------------------------ the generators
//
// "dense_deformation_field" and "dense_displacement_field": the deformation
// (or displacement) of a registration in progress at every voxel - a small
// affine plus a smooth B-spline displacement (see the header). Shared by the
// family's kernels that read one dense field. Variables (all optional):
//   dim: [x, y, z] or n      image size in voxels, each axis >= 2 (default 217^3)
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   amplitude: a             B-spline displacement size in voxels (default 3)
//   rotation, scaling, translation: the affine part (defaults 3 degrees,
//                            0.03, 2 voxels)
// Derived variables: imageDimX/Y/Z, voxelNumber.
// Inputs: deformationField or displacementField (float4, w = 0).

namespace {

const std::vector<std::string> kDenseFieldVariables = {"dim", "spacing", "amplitude", "rotation", "scaling",
                                                       "translation"};

fitness::Workload dense_workload(Dim3 image) {
  fitness::Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"voxelNumber", static_cast<double>(image.voxels())},
  };
  return w;
}

fitness::Workload generate_dense_deformation_field(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("dense_deformation_field", variables, kDenseFieldVariables);
  const Dim3 image = dense_field_dims(args);
  const DenseFieldOptions options = dense_field_options(args, image, seed, kStreamAffine);
  fitness::Workload w = dense_workload(image);
  w.inputs["deformationField"] = to_bytes(dense_deformation(image, options, seed));
  return w;
}

fitness::Workload generate_dense_displacement_field(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("dense_displacement_field", variables, kDenseFieldVariables);
  const Dim3 image = dense_field_dims(args);
  const DenseFieldOptions options = dense_field_options(args, image, seed, kStreamAffine);
  fitness::Workload w = dense_workload(image);
  w.inputs["displacementField"] = to_bytes(dense_displacement(image, options, seed));
  return w;
}

}  // namespace

}  // namespace gi::seeds

GI_REGISTER_GENERATOR("dense_deformation_field", gi::seeds::generate_dense_deformation_field);
GI_REGISTER_GENERATOR("dense_displacement_field", gi::seeds::generate_dense_displacement_field);
