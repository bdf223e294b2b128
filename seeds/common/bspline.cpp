#include "seeds/common/bspline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "seeds/common/rng.hpp"
#include "seeds/common/smooth_noise.hpp"

namespace gi::seeds {

namespace {

int points_needed(int dim, double spacing) {
  const int in_double = static_cast<int>(std::floor((dim - 1) / spacing)) + 4;
  const float quotient = static_cast<float>(dim - 1) / static_cast<float>(spacing);
  const int in_float = static_cast<int>(std::floor(quotient)) + 4;
  return std::max(in_double, in_float);
}

}  // namespace

Dim3 control_grid_dims(Dim3 image, const std::array<double, 3>& spacing) {
  return Dim3{points_needed(image.x, spacing[0]), points_needed(image.y, spacing[1]),
              points_needed(image.z, spacing[2])};
}

std::vector<Float4> smooth_control_grid(Dim3 grid, double amplitude, std::uint64_t seed) {
  // Correlated over about three control points, like a regularised transformation.
  const SmoothNoise fx(grid, 3.0, seed, kStreamControlGrid * 16 + 0);
  const SmoothNoise fy(grid, 3.0, seed, kStreamControlGrid * 16 + 1);
  const SmoothNoise fz(grid, 3.0, seed, kStreamControlGrid * 16 + 2);
  std::vector<Float4> points(grid.voxels());
  for (int k = 0; k < grid.z; ++k)
    for (int j = 0; j < grid.y; ++j)
      for (int i = 0; i < grid.x; ++i) {
        const std::size_t n = grid.index(i, j, k);
        auto jitter = [&](std::uint64_t c) { return hash_uniform(seed, kStreamControlJitter * 16 + c, n, -1, 1); };
        points[n].x = static_cast<float>(amplitude * (0.85 * fx.at(i, j, k) + 0.15 * jitter(0)));
        points[n].y = static_cast<float>(amplitude * (0.85 * fy.at(i, j, k) + 0.15 * jitter(1)));
        points[n].z = static_cast<float>(amplitude * (0.85 * fz.at(i, j, k) + 0.15 * jitter(2)));
        points[n].w = 0.0f;
      }
  return points;
}

std::vector<double> bspline_deformation(const std::vector<Float4>& grid, Dim3 grid_dims, Dim3 image,
                                        const std::array<double, 3>& spacing,
                                        const std::vector<std::int32_t>& active) {
  if (grid.size() != grid_dims.voxels())
    throw std::runtime_error("bspline_deformation: the grid holds " + std::to_string(grid.size()) +
                             " points, its dimensions say " + std::to_string(grid_dims.voxels()));
  const int dims[3] = {image.x, image.y, image.z};
  const int points[3] = {grid_dims.x, grid_dims.y, grid_dims.z};
  for (int a = 0; a < 3; ++a) {
    if (!(spacing[a] > 0)) throw std::runtime_error("bspline_deformation: spacing must be positive");
    const int last = static_cast<int>(std::floor((dims[a] - 1) / spacing[a])) + 3;
    if (last >= points[a])
      throw std::runtime_error("bspline_deformation: axis " + std::to_string(a) + " needs " +
                               std::to_string(last + 1) + " control points, the grid has " +
                               std::to_string(points[a]));
  }
  const std::size_t voxels = image.voxels();
  for (const std::int32_t i : active)
    if (i < 0 || static_cast<std::size_t>(i) >= voxels)
      throw std::runtime_error("bspline_deformation: active voxel index " + std::to_string(i) +
                               " outside the image");
  std::vector<double> out(active.size() * 4);
  const std::size_t slice = static_cast<std::size_t>(image.x) * static_cast<std::size_t>(image.y);
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto index = static_cast<std::size_t>(active[t]);
      const auto z = static_cast<int>(index / slice);
      const auto y = static_cast<int>((index % slice) / static_cast<std::size_t>(image.x));
      const auto x = static_cast<int>(index % static_cast<std::size_t>(image.x));
      const double gx = x / spacing[0], gy = y / spacing[1], gz = z / spacing[2];
      const int px = static_cast<int>(std::floor(gx)), py = static_cast<int>(std::floor(gy)),
                pz = static_cast<int>(std::floor(gz));
      double bx[4], by[4], bz[4];
      bspline_basis(gx - px, bx);
      bspline_basis(gy - py, by);
      bspline_basis(gz - pz, bz);
      double dx = 0, dy = 0, dz = 0;
      for (int c = 0; c < 4; ++c)
        for (int b = 0; b < 4; ++b)
          for (int a = 0; a < 4; ++a) {
            const Float4& p = grid[grid_dims.index(px + a, py + b, pz + c)];
            const double w = bx[a] * by[b] * bz[c];
            dx += w * p.x;
            dy += w * p.y;
            dz += w * p.z;
          }
      out[4 * t + 0] = x + dx;
      out[4 * t + 1] = y + dy;
      out[4 * t + 2] = z + dz;
      out[4 * t + 3] = 0.0;
    }
  });
  return out;
}

}  // namespace gi::seeds
