#include "seeds/tools/tools_support.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "seeds/common/bspline.hpp"
#include "seeds/common/rng.hpp"
#include "seeds/common/smooth_noise.hpp"

namespace gi::seeds::tools {

namespace {

// Streams of the tools generators, apart from the ones other seeds use.
constexpr std::uint64_t kStreamResidual = kStreamField * 16 + 8;  // + 0, 1, 2: the displacement's axes
constexpr std::uint64_t kStreamGradientJunk = kStreamJunk * 16 + 1;

std::size_t at(Dim3 d, int x, int y, int z) { return d.index(x, y, z); }

}  // namespace

SsdStep ssd_step(Dim3 dims, MaskShape mask, double displacement, std::uint64_t seed) {
  SsdStep s;
  s.reference = tissue_image(dims, seed);
  s.active = active_voxels(dims, mask, seed);
  const double extent = (dims.x + dims.y + dims.z) / 3.0;
  const double cell = std::max(4.0, 0.12 * extent);
  const SmoothNoise dx(dims, cell, seed, kStreamResidual + 0);
  const SmoothNoise dy(dims, cell, seed, kStreamResidual + 1);
  const SmoothNoise dz(dims, cell, seed, kStreamResidual + 2);
  s.warped.assign(dims.voxels(), 0.0f);
  const int n[3] = {dims.x, dims.y, dims.z};
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (int z = static_cast<int>(z0); z < static_cast<int>(z1); ++z)
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x) {
          const double p[3] = {x + displacement * dx.at(x, y, z), y + displacement * dy.at(x, y, z),
                               z + displacement * dz.at(x, y, z)};
          int pre[3];
          double w[3][2];
          for (int a = 0; a < 3; ++a) {
            pre[a] = static_cast<int>(std::floor(p[a]));
            w[a][1] = p[a] - pre[a];
            w[a][0] = 1.0 - w[a][1];
          }
          double value = 0;
          for (int c = 0; c < 2; ++c)
            for (int b = 0; b < 2; ++b)
              for (int a = 0; a < 2; ++a) {
                const int X = pre[0] + a, Y = pre[1] + b, Z = pre[2] + c;
                if (X < 0 || X >= n[0] || Y < 0 || Y >= n[1] || Z < 0 || Z >= n[2]) continue;
                value += w[0][a] * w[1][b] * w[2][c] * s.reference[at(dims, X, Y, Z)];
              }
          s.warped[at(dims, x, y, z)] = static_cast<float>(value);
        }
  });
  s.gradient.assign(dims.voxels(), Float4{});
  parallel_for(s.active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto i = static_cast<std::size_t>(s.active[t]);
      const int x = static_cast<int>(i % static_cast<std::size_t>(dims.x));
      const int y = static_cast<int>((i / static_cast<std::size_t>(dims.x)) % static_cast<std::size_t>(dims.y));
      const int z = static_cast<int>(i / (static_cast<std::size_t>(dims.x) * static_cast<std::size_t>(dims.y)));
      // One-sided differences at the border, central inside.
      auto diff = [&](int axis) {
        int lo[3] = {x, y, z}, hi[3] = {x, y, z};
        if (lo[axis] > 0) --lo[axis];
        if (hi[axis] + 1 < n[axis]) ++hi[axis];
        const int span = hi[axis] - lo[axis];
        return span == 0 ? 0.0
                         : (static_cast<double>(s.warped[at(dims, hi[0], hi[1], hi[2])]) -
                            s.warped[at(dims, lo[0], lo[1], lo[2])]) /
                               span;
      };
      const double residual = 2.0 * (static_cast<double>(s.warped[i]) - s.reference[i]);
      s.gradient[i] = Float4{static_cast<float>(residual * diff(0)), static_cast<float>(residual * diff(1)),
                             static_cast<float>(residual * diff(2)), 0.0f};
    }
  });
  return s;
}

std::vector<Float4> scaled_gradient_with_junk(const SsdStep& step, double amplitude, std::uint64_t seed) {
  double sum_squares = 0;
  for (const std::int32_t i : step.active) {
    const Float4& g = step.gradient[static_cast<std::size_t>(i)];
    sum_squares += static_cast<double>(g.x) * g.x + static_cast<double>(g.y) * g.y + static_cast<double>(g.z) * g.z;
  }
  const double rms = step.active.empty() ? 0.0 : std::sqrt(sum_squares / static_cast<double>(step.active.size()));
  const double gain = rms > 0 ? amplitude / rms : 1.0;
  std::vector<Float4> out(step.gradient.size());
  parallel_for(out.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Float4& g = step.gradient[i];
      out[i] = Float4{static_cast<float>(gain * g.x), static_cast<float>(gain * g.y), static_cast<float>(gain * g.z),
                      static_cast<float>(hash_uniform(seed, kStreamGradientJunk, i, -1000, 1000))};
    }
  });
  return out;
}

std::vector<float> intensity_image(Dim3 dims, double scale, double offset, std::uint64_t seed) {
  std::vector<float> image = tissue_image(dims, seed);
  if (scale != 1.0 || offset != 0.0)
    for (float& v : image) v = static_cast<float>(scale * v + offset);
  return image;
}

std::vector<Float4> nodes_with_junk(const std::vector<double>& nodes, std::uint64_t seed) {
  std::vector<Float4> out(nodes.size() / 4);
  for (std::size_t n = 0; n < out.size(); ++n)
    out[n] = Float4{static_cast<float>(nodes[4 * n]), static_cast<float>(nodes[4 * n + 1]),
                    static_cast<float>(nodes[4 * n + 2]),
                    static_cast<float>(hash_uniform(seed, kStreamGradientJunk + 1, n, -1000, 1000))};
  return out;
}

AxisWeights axis_weights(int dim, double spacing) {
  AxisWeights a;
  a.first.resize(static_cast<std::size_t>(dim));
  a.weight.resize(static_cast<std::size_t>(dim));
  for (int x = 0; x < dim; ++x) {
    const double g = x / spacing;
    const int p = static_cast<int>(std::floor(g));
    a.first[static_cast<std::size_t>(x)] = p;
    bspline_basis(g - p, a.weight[static_cast<std::size_t>(x)].data());
  }
  return a;
}

std::vector<double> voxel_to_node(const std::vector<Float4>& gradient, Dim3 image, Dim3 grid,
                                  const std::array<double, 3>& spacing) {
  if (gradient.size() != image.voxels())
    throw std::runtime_error("voxel_to_node: the gradient holds " + std::to_string(gradient.size()) +
                             " vectors, the image has " + std::to_string(image.voxels()) + " voxels");
  const int dims[3] = {image.x, image.y, image.z};
  const int points[3] = {grid.x, grid.y, grid.z};
  for (int a = 0; a < 3; ++a) {
    if (!(spacing[a] > 0)) throw std::runtime_error("voxel_to_node: spacing must be positive");
    const int last = static_cast<int>(std::floor((dims[a] - 1) / spacing[a])) + 3;
    if (last >= points[a])
      throw std::runtime_error("voxel_to_node: axis " + std::to_string(a) + " needs " + std::to_string(last + 1) +
                               " control points, the grid has " + std::to_string(points[a]));
  }
  const AxisWeights wx = axis_weights(image.x, spacing[0]), wy = axis_weights(image.y, spacing[1]),
                    wz = axis_weights(image.z, spacing[2]);
  const auto gx = static_cast<std::size_t>(grid.x), gy = static_cast<std::size_t>(grid.y),
             gz = static_cast<std::size_t>(grid.z);
  const auto ix = static_cast<std::size_t>(image.x), iy = static_cast<std::size_t>(image.y),
             iz = static_cast<std::size_t>(image.z);
  // Along x: t1[z][y][i] (3 components each).
  std::vector<double> t1(3 * gx * iy * iz, 0.0);
  parallel_for(iz, [&](std::size_t z0, std::size_t z1) {
    for (std::size_t z = z0; z < z1; ++z)
      for (std::size_t y = 0; y < iy; ++y)
        for (std::size_t x = 0; x < ix; ++x) {
          const Float4& g = gradient[(z * iy + y) * ix + x];
          for (int a = 0; a < 4; ++a) {
            const double w = wx.weight[x][static_cast<std::size_t>(a)];
            double* o = &t1[3 * ((z * iy + y) * gx + static_cast<std::size_t>(wx.first[x] + a))];
            o[0] += w * g.x;
            o[1] += w * g.y;
            o[2] += w * g.z;
          }
        }
  });
  // Along y: t2[z][j][i].
  std::vector<double> t2(3 * gx * gy * iz, 0.0);
  parallel_for(iz, [&](std::size_t z0, std::size_t z1) {
    for (std::size_t z = z0; z < z1; ++z)
      for (std::size_t y = 0; y < iy; ++y)
        for (int b = 0; b < 4; ++b) {
          const double w = wy.weight[y][static_cast<std::size_t>(b)];
          const std::size_t j = static_cast<std::size_t>(wy.first[y] + b);
          for (std::size_t i = 0; i < gx; ++i)
            for (int c = 0; c < 3; ++c)
              t2[3 * ((z * gy + j) * gx + i) + static_cast<std::size_t>(c)] +=
                  w * t1[3 * ((z * iy + y) * gx + i) + static_cast<std::size_t>(c)];
        }
  });
  // Along z: out[k][j][i], each k on its own.
  std::vector<double> out(4 * gx * gy * gz, 0.0);
  parallel_for(gz, [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k)
      for (std::size_t z = 0; z < iz; ++z) {
        const int c = static_cast<int>(k) - wz.first[z];
        if (c < 0 || c > 3) continue;
        const double w = wz.weight[z][static_cast<std::size_t>(c)];
        for (std::size_t n = 0; n < gx * gy; ++n)
          for (std::size_t e = 0; e < 3; ++e) out[4 * (k * gx * gy + n) + e] += w * t2[3 * (z * gx * gy + n) + e];
      }
  });
  return out;
}

std::vector<double> convolve_axis(const std::vector<Float4>& input, Dim3 dims, const std::vector<float>& weights,
                                  int axis, const char* who) {
  if (input.size() != dims.voxels() || weights.size() % 2 != 1)
    throw std::runtime_error(std::string(who) + " reference: input sizes do not match the variables");
  const int radius = static_cast<int>(weights.size() / 2);
  const int extent[3] = {dims.x, dims.y, dims.z};
  const std::ptrdiff_t stride[3] = {1, dims.x, static_cast<std::ptrdiff_t>(dims.x) * dims.y};
  std::vector<double> out(4 * input.size());
  parallel_for(input.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int coordinate[3] = {static_cast<int>(t % static_cast<std::size_t>(dims.x)),
                                 static_cast<int>((t / static_cast<std::size_t>(dims.x)) % static_cast<std::size_t>(dims.y)),
                                 static_cast<int>(t / (static_cast<std::size_t>(dims.x) * static_cast<std::size_t>(dims.y)))};
      double sum[3] = {0, 0, 0}, weight_sum = 0;
      for (int i = -radius; i <= radius; ++i) {
        if (coordinate[axis] + i < 0 || coordinate[axis] + i >= extent[axis]) continue;
        const double weight = weights[static_cast<std::size_t>(i + radius)];
        const Float4& n = input[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(t) + i * stride[axis])];
        sum[0] += weight * n.x;
        sum[1] += weight * n.y;
        sum[2] += weight * n.z;
        weight_sum += weight;
      }
      for (int c = 0; c < 3; ++c) out[4 * t + static_cast<std::size_t>(c)] = weight_sum != 0 ? sum[c] / weight_sum : 0.0;
      out[4 * t + 3] = 0.0;
    }
  });
  return out;
}

std::vector<float> explicit_weights(const GeneratorArgs& args) {
  if (!args.has("weights")) return {};
  for (const char* other : {"radius", "sigma"})
    if (args.has(other))
      args.fail(other, "give either weights or radius (and sigma), not both: the taps set the radius");
  const std::vector<double> taps = args.numbers("weights", -1e3, 1e3, 1, 129);
  if (taps.size() % 2 == 0)
    args.fail("weights", "expected an odd number of taps (2 radius + 1), found " + std::to_string(taps.size()));
  return std::vector<float>(taps.begin(), taps.end());
}

std::vector<float> binomial_weights(int radius) {
  std::vector<double> c(static_cast<std::size_t>(2 * radius + 1), 0.0);
  c[0] = 1;
  for (int row = 1; row <= 2 * radius; ++row)
    for (int k = row; k > 0; --k) c[static_cast<std::size_t>(k)] += c[static_cast<std::size_t>(k - 1)];
  const double total = std::ldexp(1.0, 2 * radius);
  std::vector<float> out(c.size());
  for (std::size_t k = 0; k < c.size(); ++k) out[k] = static_cast<float>(c[k] / total);
  return out;
}

}  // namespace gi::seeds::tools
