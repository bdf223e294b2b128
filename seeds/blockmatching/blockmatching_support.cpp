#include "seeds/blockmatching/blockmatching_support.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "seeds/common/rng.hpp"
#include "seeds/resampling/resampling_support.hpp"

namespace gi::seeds {

namespace {

double displacement_cell(Dim3 dims) { return std::max(16.0, (dims.x + dims.y + dims.z) / 9.0); }

}  // namespace

BlockMatchDisplacement::BlockMatchDisplacement(Dim3 dims, double amplitude, std::uint64_t seed)
    : amplitude_(amplitude),
      x_(dims, displacement_cell(dims), seed, kStreamField * 16 + 4),
      y_(dims, displacement_cell(dims), seed, kStreamField * 16 + 5),
      z_(dims, displacement_cell(dims), seed, kStreamField * 16 + 6) {}

std::vector<float> block_matching_warped_image(const std::vector<float>& reference, Dim3 dims,
                                               const BlockMatchDisplacement& u, double noise, std::uint64_t seed) {
  if (reference.size() != dims.voxels())
    throw std::runtime_error("block_matching_warped_image: the image holds " + std::to_string(reference.size()) +
                             " voxels, its dimensions say " + std::to_string(dims.voxels()));
  std::vector<float> warped(dims.voxels());
  const std::size_t slice = static_cast<std::size_t>(dims.x) * static_cast<std::size_t>(dims.y);
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t zz = z0; zz < z1; ++zz) {
      const int z = static_cast<int>(zz);
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x) {
          const std::array<double, 3> d = u.at(x, y, z);
          const double value = trilinear_interpolate(reference, dims, x + d[0], y + d[1], z + d[2], 0.0);
          const std::size_t i =
              zz * slice + static_cast<std::size_t>(y) * static_cast<std::size_t>(dims.x) + static_cast<std::size_t>(x);
          warped[i] = static_cast<float>(std::fabs(value + noise * hash_normal(seed, kStreamFieldNoise * 4 + 3, i)));
        }
    }
  });
  return warped;
}

Dim3 match_block_dims(Dim3 image) {
  auto blocks = [](int extent) { return (extent + kMatchBlockSize - 1) / kMatchBlockSize; };
  return Dim3{blocks(image.x), blocks(image.y), blocks(image.z)};
}

namespace {

BlockMatch match_block(const std::vector<float>& reference, const std::vector<float>& warped,
                       const std::vector<std::int32_t>& mask, Dim3 dims, Dim3 block, int min_voxels, int radius) {
  constexpr int kMax = kMatchBlockSize * kMatchBlockSize * kMatchBlockSize;
  std::ptrdiff_t offset[kMax];  // linear index of each voxel of the block
  double centred[kMax];
  int n = 0;
  int lo[3] = {dims.x, dims.y, dims.z}, hi[3] = {-1, -1, -1};
  double mean = 0;
  for (int c = 0; c < kMatchBlockSize; ++c)
    for (int b = 0; b < kMatchBlockSize; ++b)
      for (int a = 0; a < kMatchBlockSize; ++a) {
        const int v[3] = {block.x * kMatchBlockSize + a, block.y * kMatchBlockSize + b, block.z * kMatchBlockSize + c};
        if (v[0] >= dims.x || v[1] >= dims.y || v[2] >= dims.z) continue;
        const std::size_t index = dims.index(v[0], v[1], v[2]);
        if (mask[index] == 0) continue;
        for (int i = 0; i < 3; ++i) {
          lo[i] = std::min(lo[i], v[i]);
          hi[i] = std::max(hi[i], v[i]);
        }
        offset[n] = static_cast<std::ptrdiff_t>(index);
        centred[n] = reference[index];
        mean += centred[n];
        ++n;
      }
  BlockMatch m;
  m.voxels = n;
  if (n < min_voxels || n == 0) return m;
  mean /= n;
  double reference_variance = 0;
  for (int i = 0; i < n; ++i) {
    centred[i] -= mean;
    reference_variance += centred[i] * centred[i];
  }
  if (!(reference_variance > 0)) return m;
  m.used = true;
  const int extent[3] = {dims.x, dims.y, dims.z};
  const auto row = static_cast<std::ptrdiff_t>(dims.x), slice = row * static_cast<std::ptrdiff_t>(dims.y);
  for (int dz = -radius; dz <= radius; ++dz)
    for (int dy = -radius; dy <= radius; ++dy)
      for (int dx = -radius; dx <= radius; ++dx) {
        const int d[3] = {dx, dy, dz};
        bool inside = true;
        for (int i = 0; i < 3; ++i) inside = inside && lo[i] + d[i] >= 0 && hi[i] + d[i] < extent[i];
        if (!inside) continue;
        // One pass: with the reference centred, sum r (w - mean w) = sum r w,
        // and sum (w - mean w)^2 = sum w^2 - n mean w^2 (exact enough in
        // double for intensities of a few hundred over 64 voxels).
        const std::ptrdiff_t shift = dz * slice + dy * row + dx;
        double sum = 0, sum_squares = 0, covariance = 0;
        for (int i = 0; i < n; ++i) {
          const double w = warped[static_cast<std::size_t>(offset[i] + shift)];
          sum += w;
          sum_squares += w * w;
          covariance += centred[i] * w;
        }
        const double warped_variance = sum_squares - sum * sum / n;
        if (!(warped_variance > 1e-12 * sum_squares)) continue;  // zero up to rounding
        const double ncc = covariance / std::sqrt(reference_variance * warped_variance);
        if (ncc > m.ncc) {
          m.runner_up = m.ncc;
          m.ncc = ncc;
          m.displacement[0] = dx;
          m.displacement[1] = dy;
          m.displacement[2] = dz;
        } else if (ncc > m.runner_up) {
          m.runner_up = ncc;
        }
      }
  return m;
}

}  // namespace

std::vector<BlockMatch> ncc_block_search(const std::vector<float>& reference, const std::vector<float>& warped,
                                         const std::vector<std::int32_t>& mask, Dim3 dims, int min_voxels, int radius) {
  if (reference.size() != dims.voxels() || warped.size() != dims.voxels() || mask.size() != dims.voxels())
    throw std::runtime_error("ncc_block_search: the images hold " + std::to_string(reference.size()) + ", " +
                             std::to_string(warped.size()) + " and " + std::to_string(mask.size()) +
                             " voxels, the dimensions say " + std::to_string(dims.voxels()));
  if (radius < 0) throw std::runtime_error("ncc_block_search: negative search radius");
  const Dim3 blocks = match_block_dims(dims);
  std::vector<BlockMatch> matches(blocks.voxels());
  const auto bx = static_cast<std::size_t>(blocks.x), by = static_cast<std::size_t>(blocks.y);
  parallel_for(matches.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const Dim3 block{static_cast<int>(t % bx), static_cast<int>((t / bx) % by), static_cast<int>(t / (bx * by))};
      matches[t] = match_block(reference, warped, mask, dims, block, min_voxels, radius);
    }
  });
  return matches;
}

}  // namespace gi::seeds
