// The resampling and block-matching seeds: cubic B-spline resampling, the
// warped-image gradient and NCC block matching. Analytic cases for each CPU
// reference, their generators (sizes, determinism, realism), the shared CPU
// helpers (trilinear sampling, the cubic B-spline prefilter, the double block
// search), and float emulations of the kernels that must pass the specs'
// tolerances while a one-element misread must not.
//
// The float-vs-double errors recorded in the specs' tolerance notes come from
//   gi_tests --gtest_also_run_disabled_tests --gtest_filter='SeedsResampling*Measure*'
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "float_emulation.hpp"
#include "training_checks.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "seeds/blockmatching/blockmatching_support.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/volume.hpp"
#include "seeds/resampling/resampling_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;
using gi::test::compare;
using gi::test::components_of;
using gi::test::ErrorStats;
using gi::test::multiply_add;
using gi::seeds::Dim3;
using gi::seeds::Float4;
using gi::seeds::from_bytes;
using gi::seeds::to_bytes;
using gi::test::training_check;
using nlohmann::json;

const fs::path kSeeds = fs::path(GI_SOURCE_DIR) / "seeds";

KernelSpec spec_of(const char* dir) { return load_kernel_spec(kSeeds / dir); }

Workload generate(const char* generator, const json& variables, std::uint64_t seed) {
  return find_generator(generator)(variables, seed);
}

std::vector<float> random_image(Dim3 dims, unsigned seed, float lo = 0, float hi = 100) {
  std::vector<float> image(dims.voxels());
  std::mt19937 rng(seed);
  for (float& v : image) v = std::uniform_real_distribution<float>(lo, hi)(rng);
  return image;
}

// A resampling workload by hand: the variables both resampling kernels read.
Workload resampling_workload(Dim3 dims, const char* image_input, const std::vector<float>& image,
                             const std::vector<Float4>& positions, const std::vector<std::int32_t>& active,
                             double padding) {
  Workload w;
  w.variables = {{"referenceDimX", dims.x},
                 {"referenceDimY", dims.y},
                 {"referenceDimZ", dims.z},
                 {"referenceVoxelNumber", static_cast<double>(dims.voxels())},
                 {"floatingDimX", dims.x},
                 {"floatingDimY", dims.y},
                 {"floatingDimZ", dims.z},
                 {"floatingVoxelNumber", static_cast<double>(dims.voxels())},
                 {"activeVoxelNumber", static_cast<double>(active.size())},
                 {"paddingValue", padding}};
  w.inputs[image_input] = to_bytes(image);
  w.inputs["deformationField"] = to_bytes(positions);
  w.inputs["activeVoxels"] = to_bytes(active);
  return w;
}

// ------------------------------------------------------------ float emulation
// The kernels' arithmetic in float, statement by statement; `Fma` models the
// GPU compiler contracting a multiply-add into one fused operation.

void cubic_weights_f(float u, float* weight) {
  const float u2 = u * u;
  const float u3 = u2 * u;
  const float v = 1.0f - u;
  weight[0] = v * v * v / 6.0f;
  weight[1] = (3.0f * u3 - 6.0f * u2 + 4.0f) / 6.0f;
  weight[2] = (-3.0f * u3 + 3.0f * u2 + 3.0f * u + 1.0f) / 6.0f;
  weight[3] = u3 / 6.0f;
}

struct FloatingInputs {
  std::vector<float> image;
  std::vector<Float4> field;
  std::vector<std::int32_t> active;
  int fx, fy, fz;
  std::size_t reference_voxels;
};

FloatingInputs floating_inputs(const Workload& w, const char* image_input) {
  FloatingInputs in;
  in.image = from_bytes<float>(w.inputs.at(image_input), image_input);
  in.field = from_bytes<Float4>(w.inputs.at("deformationField"), "field");
  in.active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  in.fx = static_cast<int>(w.variables.at("floatingDimX"));
  in.fy = static_cast<int>(w.variables.at("floatingDimY"));
  in.fz = static_cast<int>(w.variables.at("floatingDimZ"));
  in.reference_voxels = static_cast<std::size_t>(w.variables.at("referenceVoxelNumber"));
  return in;
}

template <bool Fma>
std::vector<float> emulate_cubic(const Workload& w) {
  const FloatingInputs in = floating_inputs(w, "floatingCoefficients");
  const auto padding = static_cast<float>(w.variables.at("paddingValue"));
  std::vector<float> out(in.reference_voxels, std::numeric_limits<float>::quiet_NaN());
  gi::seeds::parallel_for(in.active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t tid = begin; tid < end; ++tid) {
      const Float4 p = in.field[tid];
      const int xPre = static_cast<int>(std::floor(p.x)), yPre = static_cast<int>(std::floor(p.y)),
                zPre = static_cast<int>(std::floor(p.z));
      float xw[4], yw[4], zw[4];
      cubic_weights_f(p.x - static_cast<float>(xPre), xw);
      cubic_weights_f(p.y - static_cast<float>(yPre), yw);
      cubic_weights_f(p.z - static_cast<float>(zPre), zw);
      float value = 0.0f;
      for (int c = 0; c < 4; c++)
        for (int b = 0; b < 4; b++)
          for (int a = 0; a < 4; a++) {
            const int X = xPre - 1 + a, Y = yPre - 1 + b, Z = zPre - 1 + c;
            const float coefficient = X >= 0 && X < in.fx && Y >= 0 && Y < in.fy && Z >= 0 && Z < in.fz
                                          ? in.image[static_cast<std::size_t>((Z * in.fy + Y) * in.fx + X)]
                                          : padding;
            value = multiply_add<Fma>(xw[a] * yw[b] * zw[c], coefficient, value);
          }
      out[static_cast<std::size_t>(in.active[tid])] = value;
    }
  });
  return out;
}

template <bool Fma>
std::vector<float> emulate_gradient(const Workload& w) {
  const FloatingInputs in = floating_inputs(w, "floatingImage");
  std::vector<float> out(4 * in.reference_voxels, std::numeric_limits<float>::quiet_NaN());
  gi::seeds::parallel_for(in.active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t tid = begin; tid < end; ++tid) {
      const Float4 p = in.field[tid];
      const int xPre = static_cast<int>(std::floor(p.x)), yPre = static_cast<int>(std::floor(p.y)),
                zPre = static_cast<int>(std::floor(p.z));
      const float relX = p.x - static_cast<float>(xPre), relY = p.y - static_cast<float>(yPre),
                  relZ = p.z - static_cast<float>(zPre);
      const float xw[2] = {1.0f - relX, relX}, yw[2] = {1.0f - relY, relY}, zw[2] = {1.0f - relZ, relZ};
      const float d[2] = {-1.0f, 1.0f};
      float gx = 0.0f, gy = 0.0f, gz = 0.0f;
      if (xPre >= 0 && xPre + 1 < in.fx && yPre >= 0 && yPre + 1 < in.fy && zPre >= 0 && zPre + 1 < in.fz) {
        for (int c = 0; c < 2; c++)
          for (int b = 0; b < 2; b++)
            for (int a = 0; a < 2; a++) {
              const float intensity =
                  in.image[static_cast<std::size_t>(((zPre + c) * in.fy + yPre + b) * in.fx + xPre + a)];
              gx = multiply_add<Fma>(d[a] * yw[b] * zw[c], intensity, gx);
              gy = multiply_add<Fma>(xw[a] * d[b] * zw[c], intensity, gy);
              gz = multiply_add<Fma>(xw[a] * yw[b] * d[c], intensity, gz);
            }
      }
      const std::size_t o = 4 * static_cast<std::size_t>(in.active[tid]);
      out[o + 0] = gx;
      out[o + 1] = gy;
      out[o + 2] = gz;
      out[o + 3] = 0.0f;
    }
  });
  return out;
}

template <bool Fma>
std::vector<float> emulate_block_matching(const Workload& w) {
  const auto reference = from_bytes<float>(w.inputs.at("referenceImage"), "reference");
  const auto warped = from_bytes<float>(w.inputs.at("warpedImage"), "warped");
  const auto mask = from_bytes<std::int32_t>(w.inputs.at("mask"), "mask");
  const int dx = static_cast<int>(w.variables.at("imageDimX")), dy = static_cast<int>(w.variables.at("imageDimY")),
            dz = static_cast<int>(w.variables.at("imageDimZ"));
  const int bx = static_cast<int>(w.variables.at("blockDimX")), by = static_cast<int>(w.variables.at("blockDimY")),
            bz = static_cast<int>(w.variables.at("blockDimZ"));
  const int minimum = static_cast<int>(w.variables.at("minimumVoxelNumber"));
  const int radius = static_cast<int>(w.variables.at("searchRadius"));
  const std::size_t blocks = static_cast<std::size_t>(bx) * static_cast<std::size_t>(by) * static_cast<std::size_t>(bz);
  std::vector<float> out(4 * blocks);
  auto idx = [&](int X, int Y, int Z) { return static_cast<std::size_t>((Z * dy + Y) * dx + X); };
  gi::seeds::parallel_for(blocks, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int tid = static_cast<int>(t);
      const int blockX = tid % bx, blockY = (tid / bx) % by, blockZ = tid / (bx * by);
      float result[4] = {0.0f, 0.0f, 0.0f, -2.0f};
      int n = 0;
      float rmean = 0.0f;
      // The block's voxels in the kernel's loop order.
      std::vector<std::array<int, 3>> voxels;
      for (int c = 0; c < 4; c++)
        for (int b = 0; b < 4; b++)
          for (int a = 0; a < 4; a++) {
            const int X = blockX * 4 + a, Y = blockY * 4 + b, Z = blockZ * 4 + c;
            if (X < dx && Y < dy && Z < dz && mask[idx(X, Y, Z)] != 0) {
              rmean += reference[idx(X, Y, Z)];
              ++n;
              voxels.push_back({X, Y, Z});
            }
          }
      if (n >= minimum && n > 0) {
        rmean = rmean / static_cast<float>(n);
        float rvar = 0.0f;
        for (const auto& v : voxels) {
          const float r = reference[idx(v[0], v[1], v[2])] - rmean;
          rvar = multiply_add<Fma>(r, r, rvar);
        }
        if (rvar > 0.0f) {
          for (int k = -radius; k <= radius; k++)
            for (int j = -radius; j <= radius; j++)
              for (int i = -radius; i <= radius; i++) {
                bool inside = true;
                float wmean = 0.0f;
                for (const auto& v : voxels) {
                  const int X = v[0] + i, Y = v[1] + j, Z = v[2] + k;
                  if (X >= 0 && X < dx && Y >= 0 && Y < dy && Z >= 0 && Z < dz)
                    wmean += warped[idx(X, Y, Z)];
                  else
                    inside = false;
                }
                if (!inside) continue;
                wmean = wmean / static_cast<float>(n);
                float wvar = 0.0f, cov = 0.0f;
                for (const auto& v : voxels) {
                  const float r = reference[idx(v[0], v[1], v[2])] - rmean;
                  const float wv = warped[idx(v[0] + i, v[1] + j, v[2] + k)] - wmean;
                  cov = multiply_add<Fma>(r, wv, cov);
                  wvar = multiply_add<Fma>(wv, wv, wvar);
                }
                if (wvar > 0.0f) {
                  const float ncc = cov / std::sqrt(rvar * wvar);
                  if (ncc > result[3]) {
                    result[0] = static_cast<float>(i);
                    result[1] = static_cast<float>(j);
                    result[2] = static_cast<float>(k);
                    result[3] = ncc;
                  }
                }
              }
        }
      }
      for (int c = 0; c < 4; ++c) out[4 * t + static_cast<std::size_t>(c)] = result[c];
    }
  });
  return out;
}

std::vector<float> emulate(const std::string& entry, const Workload& w, bool fma) {
  if (entry == "cubic_bspline_resample") return fma ? emulate_cubic<true>(w) : emulate_cubic<false>(w);
  if (entry == "warped_image_gradient") return fma ? emulate_gradient<true>(w) : emulate_gradient<false>(w);
  if (entry == "ncc_block_matching") return fma ? emulate_block_matching<true>(w) : emulate_block_matching<false>(w);
  throw std::runtime_error("no emulation for " + entry);
}

ErrorStats emulate_and_compare(const KernelSpec& spec, const Workload& w, bool fma) {
  const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
  if (expected.size() != 1) throw std::runtime_error("expected one output");
  const std::size_t components = element_components(spec.find_parameter(expected[0].buffer)->type);
  return compare(emulate(spec.entry, w, fma), expected[0], components, spec.tolerance);
}

const char* const kDirs[] = {"resampling/cubic_bspline", "resampling/warped_gradient",
                             "blockmatching/ncc_block_matching"};

// ------------------------------------------------------------ shared helpers

TEST(SeedsResamplingSupport, TrilinearSampleIsExactOnVoxelsAndPadsOutside) {
  const Dim3 dims{5, 4, 3};
  const auto image = random_image(dims, 1);
  for (int z = 0; z < dims.z; ++z)
    for (int y = 0; y < dims.y; ++y)
      for (int x = 0; x < dims.x; ++x)
        ASSERT_EQ(gi::seeds::trilinear_interpolate(image, dims, x, y, z, -3), image[dims.index(x, y, z)]);
  EXPECT_EQ(gi::seeds::trilinear_interpolate(image, dims, -1.5, 1, 1, -3), -3);
  EXPECT_NEAR(gi::seeds::trilinear_interpolate(image, dims, 4.5, 1, 1, -3), 0.5 * image[dims.index(4, 1, 1)] - 1.5,
              1e-12);
  EXPECT_NEAR(gi::seeds::trilinear_interpolate(image, dims, 1.25, 2, 0, 0),
              0.75 * image[dims.index(1, 2, 0)] + 0.25 * image[dims.index(2, 2, 0)], 1e-12);
}

// The B-spline of the coefficients, with mirrored coefficients beyond the
// border, passes through every voxel value: sum_k c[x + k] b(k) with
// b(-1) = b(1) = 1/6, b(0) = 4/6.
TEST(SeedsResamplingSupport, PrefilteredCoefficientsInterpolateEveryVoxel) {
  for (const Dim3 dims : {Dim3{9, 7, 6}, Dim3{40, 3, 2}, Dim3{1, 5, 33}}) {
    SCOPED_TRACE(std::to_string(dims.x) + "x" + std::to_string(dims.y) + "x" + std::to_string(dims.z));
    const auto image = random_image(dims, 7);
    const auto c = gi::seeds::cubic_bspline_coefficients(image, dims);
    ASSERT_EQ(c.size(), dims.voxels());
    auto mirror = [](int i, int n) {
      if (n == 1) return 0;
      if (i < 0) return -i;
      if (i >= n) return 2 * n - 2 - i;
      return i;
    };
    const double b[3] = {1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0};
    double largest_change = 0;
    for (int z = 0; z < dims.z; ++z)
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x) {
          double value = 0;
          for (int k = -1; k <= 1; ++k)
            for (int j = -1; j <= 1; ++j)
              for (int i = -1; i <= 1; ++i)
                value += b[i + 1] * b[j + 1] * b[k + 1] *
                         c[dims.index(mirror(x + i, dims.x), mirror(y + j, dims.y), mirror(z + k, dims.z))];
          ASSERT_NEAR(value, image[dims.index(x, y, z)], 1e-9) << x << " " << y << " " << z;
          largest_change = std::max(largest_change, std::fabs(c[dims.index(x, y, z)] - image[dims.index(x, y, z)]));
        }
    EXPECT_GT(largest_change, 1.0);  // the coefficients are not the image
  }
  EXPECT_THROW(gi::seeds::cubic_bspline_coefficients(std::vector<float>(5), Dim3{2, 2, 2}), std::runtime_error);
}

// --------------------------------------------------------- cubic B-spline

TEST(SeedsResamplingCubic, VoxelCentresGiveTheImageAndFarOutsideGivesPadding) {
  const Dim3 dims{9, 8, 7};
  const auto image = random_image(dims, 3);
  const auto coefficients_double = gi::seeds::cubic_bspline_coefficients(image, dims);
  const std::vector<float> coefficients(coefficients_double.begin(), coefficients_double.end());
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;
  for (int z = 1; z + 1 < dims.z; ++z)
    for (int y = 1; y + 1 < dims.y; ++y)
      for (int x = 1; x + 1 < dims.x; ++x) {
        active.push_back(static_cast<std::int32_t>(dims.index(x, y, z)));
        positions.push_back(Float4{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z), 0});
      }
  // Two voxels map far away: two voxels before x = 0, and beyond the last z.
  const std::size_t before = 0, beyond = 1;
  positions[before] = Float4{-2.0f, 3.5f, 3.0f, 0};
  positions[beyond] = Float4{4.0f, 4.0f, 9.25f, 0};
  const double padding = -7.5;
  const auto out = find_reference("cubic_bspline_resample")(
                       resampling_workload(dims, "floatingCoefficients", coefficients, positions, active, padding))
                       .at("warpedImage");
  ASSERT_EQ(out.size(), dims.voxels());
  for (std::size_t t = 2; t < active.size(); ++t)
    ASSERT_NEAR(out[static_cast<std::size_t>(active[t])], image[static_cast<std::size_t>(active[t])], 1e-4);
  EXPECT_NEAR(out[static_cast<std::size_t>(active[before])], padding, 1e-12);
  EXPECT_NEAR(out[static_cast<std::size_t>(active[beyond])], padding, 1e-12);
  std::size_t unwritten = 0;
  for (double v : out) unwritten += std::isnan(v) ? 1 : 0;
  EXPECT_EQ(unwritten, dims.voxels() - active.size());
}

// Cubic B-splines reproduce linear functions: coefficients 2x + 3y - z + 5
// give 2px + 3py - pz + 5 wherever all 64 coefficients are inside; one
// voxel beyond the border the padding value pulls the result away.
TEST(SeedsResamplingCubic, ReproducesALinearFunctionBetweenVoxels) {
  const Dim3 dims{10, 9, 8};
  std::vector<float> coefficients(dims.voxels());
  for (int z = 0; z < dims.z; ++z)
    for (int y = 0; y < dims.y; ++y)
      for (int x = 0; x < dims.x; ++x) coefficients[dims.index(x, y, z)] = static_cast<float>(2 * x + 3 * y - z + 5);
  std::mt19937 rng(11);
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(dims.voxels()); i += 3) {
    active.push_back(i);
    positions.push_back(Float4{std::uniform_real_distribution<float>(1, 7.99f)(rng),
                               std::uniform_real_distribution<float>(1, 6.99f)(rng),
                               std::uniform_real_distribution<float>(1, 5.99f)(rng), 0});
  }
  positions[0] = Float4{0.5f, 4.0f, 4.0f, 0};  // coefficient x = -1 is outside
  const auto out = find_reference("cubic_bspline_resample")(
                       resampling_workload(dims, "floatingCoefficients", coefficients, positions, active, 100))
                       .at("warpedImage");
  for (std::size_t t = 1; t < active.size(); ++t) {
    const Float4& p = positions[t];
    ASSERT_NEAR(out[static_cast<std::size_t>(active[t])], 2.0 * p.x + 3.0 * p.y - p.z + 5, 1e-9);
  }
  // Weight of x = -1 at u = 0.5 is 1/48: (100 - (-1 * 2 + 12 - 4 + 5)) / 48 above the linear value.
  const double linear = 2 * 0.5 + 3 * 4.0 - 4.0 + 5;
  EXPECT_NEAR(out[static_cast<std::size_t>(active[0])], linear + (100 - (2 * -1 + 12 - 4 + 5)) / 48.0, 1e-9);
}

TEST(SeedsResamplingCubic, GeneratorPrefiltersTheTissueImageDeterministically) {
  const json variables = {{"dim", {30, 26, 22}}, {"floating_dim", {24, 30, 20}}, {"mask", "full"}, {"padding", 1.5}};
  const Workload a = generate("cubic_bspline_brain", variables, 5), b = generate("cubic_bspline_brain", variables, 5),
                 c = generate("cubic_bspline_brain", variables, 6);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.variables, b.variables);
  EXPECT_NE(a.inputs.at("floatingCoefficients"), c.inputs.at("floatingCoefficients"));
  EXPECT_NE(a.inputs.at("deformationField"), c.inputs.at("deformationField"));
  EXPECT_EQ(a.variables.at("paddingValue"), 1.5);
  EXPECT_EQ(a.variables.at("floatingVoxelNumber"), 24 * 30 * 20);
  EXPECT_EQ(a.variables.at("activeVoxelNumber"), 30 * 26 * 22);
  const Dim3 floating{24, 30, 20};
  const auto coefficients = from_bytes<float>(a.inputs.at("floatingCoefficients"), "coefficients");
  ASSERT_EQ(coefficients.size(), floating.voxels());
  // They are the tissue image's coefficients, not the image.
  const auto image = gi::seeds::tissue_image(floating, 5);
  const auto expected = gi::seeds::cubic_bspline_coefficients(image, floating);
  double differs = 0;
  for (std::size_t i = 0; i < coefficients.size(); ++i) {
    ASSERT_EQ(coefficients[i], static_cast<float>(expected[i]));
    differs = std::max(differs, std::fabs(static_cast<double>(coefficients[i]) - image[i]));
  }
  EXPECT_GT(differs, 1.0);
  EXPECT_THROW(generate("cubic_bspline_brain", {{"dim", 20}, {"padd", 1}}, 1), std::runtime_error);
}

// ------------------------------------------------------ warped gradient

TEST(SeedsResamplingGradient, LinearImageHasItsSlopeInsideAndZeroOutside) {
  const Dim3 dims{9, 8, 7};
  std::vector<float> image(dims.voxels());
  for (int z = 0; z < dims.z; ++z)
    for (int y = 0; y < dims.y; ++y)
      for (int x = 0; x < dims.x; ++x) image[dims.index(x, y, z)] = static_cast<float>(2 * x - 3 * y + 0.5 * z + 5);
  std::mt19937 rng(4);
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;
  for (std::int32_t i = 1; i < static_cast<std::int32_t>(dims.voxels()); i += 2) {
    active.push_back(i);
    positions.push_back(Float4{std::uniform_real_distribution<float>(0, 7.99f)(rng),
                               std::uniform_real_distribution<float>(0, 6.99f)(rng),
                               std::uniform_real_distribution<float>(0, 5.99f)(rng), 0});
  }
  // Outside: before the image, on the last x plane (its cell would need
  // x = 9), far beyond z.
  const std::vector<Float4> outside = {{-0.01f, 3, 3, 0}, {8.0f, 3.5f, 2, 0}, {4, 4, 20, 0}, {4, -5, 3, 0}};
  for (std::size_t k = 0; k < outside.size(); ++k) positions[k] = outside[k];
  const auto out =
      find_reference("warped_image_gradient")(resampling_workload(dims, "floatingImage", image, positions, active, 0))
          .at("warpedGradient");
  ASSERT_EQ(out.size(), 4 * dims.voxels());
  for (std::size_t t = 0; t < active.size(); ++t) {
    const std::size_t o = 4 * static_cast<std::size_t>(active[t]);
    const bool in = t >= outside.size();
    ASSERT_NEAR(out[o + 0], in ? 2.0 : 0.0, 1e-12) << t;
    ASSERT_NEAR(out[o + 1], in ? -3.0 : 0.0, 1e-12) << t;
    ASSERT_NEAR(out[o + 2], in ? 0.5 : 0.0, 1e-12) << t;
    ASSERT_EQ(out[o + 3], 0.0);
  }
  std::size_t unwritten = 0;
  for (double v : out) unwritten += std::isnan(v) ? 1 : 0;
  EXPECT_EQ(unwritten, 4 * (dims.voxels() - active.size()));
}

// Inside a cell the trilinear interpolant is smooth: the gradient equals a
// central finite difference of trilinear sampling.
TEST(SeedsResamplingGradient, MatchesAFiniteDifferenceOfTrilinearSampling) {
  const Dim3 dims{8, 7, 6};
  const auto image = random_image(dims, 12);
  std::mt19937 rng(13);
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(dims.voxels()); ++i) {
    active.push_back(i);
    // Cell p .. p + 1 with the fraction in [0.1, 0.9], away from cell faces.
    auto coordinate = [&](int cells) {
      return static_cast<float>(std::uniform_int_distribution<int>(0, cells - 1)(rng)) +
             std::uniform_real_distribution<float>(0.1f, 0.9f)(rng);
    };
    positions.push_back(Float4{coordinate(dims.x - 1), coordinate(dims.y - 1), coordinate(dims.z - 1), 0});
  }
  const auto out =
      find_reference("warped_image_gradient")(resampling_workload(dims, "floatingImage", image, positions, active, 0))
          .at("warpedGradient");
  const double h = 1e-4;
  double largest = 0;
  for (std::size_t t = 0; t < active.size(); ++t) {
    const double p[3] = {positions[t].x, positions[t].y, positions[t].z};
    for (int a = 0; a < 3; ++a) {
      double plus[3] = {p[0], p[1], p[2]}, minus[3] = {p[0], p[1], p[2]};
      plus[a] += h;
      minus[a] -= h;
      const double fd = (gi::seeds::trilinear_interpolate(image, dims, plus[0], plus[1], plus[2], 0) -
                         gi::seeds::trilinear_interpolate(image, dims, minus[0], minus[1], minus[2], 0)) /
                        (2 * h);
      const double g = out[4 * static_cast<std::size_t>(active[t]) + static_cast<std::size_t>(a)];
      ASSERT_NEAR(g, fd, 1e-6) << t << " axis " << a;
      largest = std::max(largest, std::fabs(g));
    }
  }
  EXPECT_GT(largest, 10.0);  // a random image has steep gradients
}

TEST(SeedsResamplingGradient, GeneratorGivesTissueImageAndPositionsNearTheIdentity) {
  const json variables = {{"dim", {32, 28, 24}}, {"mask", "full"}, {"amplitude", 2}};
  const Workload a = generate("warped_gradient_brain", variables, 3),
                 b = generate("warped_gradient_brain", variables, 3),
                 c = generate("warped_gradient_brain", variables, 4);
  EXPECT_EQ(a.inputs, b.inputs);
  for (const char* name : {"floatingImage", "deformationField"})
    EXPECT_NE(a.inputs.at(name), c.inputs.at(name)) << name;
  EXPECT_EQ(a.variables.count("paddingValue"), 0u);
  EXPECT_EQ(from_bytes<float>(a.inputs.at("floatingImage"), "image"), gi::seeds::tissue_image(Dim3{32, 28, 24}, 3));
  const auto field = from_bytes<Float4>(a.inputs.at("deformationField"), "field");
  const auto active = from_bytes<std::int32_t>(a.inputs.at("activeVoxels"), "active");
  ASSERT_EQ(field.size(), active.size());
  ASSERT_EQ(active.size(), 32u * 28u * 24u);
  double largest = 0;
  std::size_t outside = 0;
  for (std::size_t t = 0; t < active.size(); ++t) {
    const int i = active[t], x = i % 32, y = (i / 32) % 28, z = i / (32 * 28);
    largest = std::max({largest, std::fabs(double{field[t].x} - x), std::fabs(double{field[t].y} - y),
                        std::fabs(double{field[t].z} - z)});
    outside +=
        field[t].x < 0 || field[t].x >= 31 || field[t].y < 0 || field[t].y >= 27 || field[t].z < 0 || field[t].z >= 23;
  }
  EXPECT_GT(largest, 0.5);
  EXPECT_LT(largest, 6.0);
  EXPECT_GT(outside, 0u);  // a full mask near the border exercises the zero gradient
  EXPECT_THROW(generate("warped_gradient_brain", {{"dim", 20}, {"padding", 1}}, 1), std::runtime_error);
}

// ------------------------------------------------------- block matching

Workload block_matching_workload(Dim3 dims, const std::vector<float>& reference, const std::vector<float>& warped,
                                 const std::vector<std::int32_t>& mask, int min_voxels, int radius) {
  const Dim3 blocks = gi::seeds::match_block_dims(dims);
  Workload w;
  w.variables = {{"imageDimX", dims.x},
                 {"imageDimY", dims.y},
                 {"imageDimZ", dims.z},
                 {"voxelNumber", static_cast<double>(dims.voxels())},
                 {"blockDimX", blocks.x},
                 {"blockDimY", blocks.y},
                 {"blockDimZ", blocks.z},
                 {"blockNumber", static_cast<double>(blocks.voxels())},
                 {"minimumVoxelNumber", min_voxels},
                 {"searchRadius", radius},
                 {"usedBlockNumber", 0},
                 {"usedBlockVoxelNumber", 0},
                 {"nearTieBlockNumber", 0}};
  w.inputs["referenceImage"] = to_bytes(reference);
  w.inputs["warpedImage"] = to_bytes(warped);
  w.inputs["mask"] = to_bytes(mask);
  return w;
}

// The warped image is the reference shifted by an integer translation t:
// W(x) = R(x - t). Every used block whose shifted block stays inside finds
// d = t with NCC 1 (in double, and in the float emulation of the kernel).
TEST(SeedsResamplingBlockMatching, ImageShiftedByAnIntegerTranslationIsFoundWithNccOne) {
  const Dim3 dims{30, 27, 25};  // not multiples of 4: the last blocks are cut
  const auto reference = gi::seeds::tissue_image(dims, 9);
  const int t[3] = {2, -1, 3};
  std::vector<float> warped(dims.voxels());
  std::mt19937 rng(2);
  for (int z = 0; z < dims.z; ++z)
    for (int y = 0; y < dims.y; ++y)
      for (int x = 0; x < dims.x; ++x) {
        const int X = x - t[0], Y = y - t[1], Z = z - t[2];
        const bool inside = X >= 0 && X < dims.x && Y >= 0 && Y < dims.y && Z >= 0 && Z < dims.z;
        warped[dims.index(x, y, z)] =
            inside ? reference[dims.index(X, Y, Z)] : std::uniform_real_distribution<float>(0, 100)(rng);
      }
  std::vector<std::int32_t> mask(dims.voxels(), 1);
  const Workload w = block_matching_workload(dims, reference, warped, mask, 32, 3);
  const auto out = find_reference("ncc_block_matching")(w).at("blockResults");
  const Dim3 blocks = gi::seeds::match_block_dims(dims);
  ASSERT_EQ(blocks.x, 8);
  ASSERT_EQ(blocks.z, 7);
  ASSERT_EQ(out.size(), 4 * blocks.voxels());
  const auto emulated = emulate_block_matching<true>(w);
  std::size_t found = 0;
  for (int k = 0; k < blocks.z; ++k)
    for (int j = 0; j < blocks.y; ++j)
      for (int i = 0; i < blocks.x; ++i) {
        const std::size_t b = blocks.index(i, j, k);
        // Voxels of the block (cut at the border) shifted by t stay inside?
        const int lo[3] = {4 * i + t[0], 4 * j + t[1], 4 * k + t[2]};
        const int hi[3] = {std::min(4 * i + 3, dims.x - 1) + t[0], std::min(4 * j + 3, dims.y - 1) + t[1],
                           std::min(4 * k + 3, dims.z - 1) + t[2]};
        const int voxels = (std::min(4 * i + 3, dims.x - 1) - 4 * i + 1) *
                           (std::min(4 * j + 3, dims.y - 1) - 4 * j + 1) *
                           (std::min(4 * k + 3, dims.z - 1) - 4 * k + 1);
        if (voxels < 32) {
          EXPECT_EQ(out[4 * b + 3], gi::seeds::kNoMatchNcc);  // too few voxels: the marker
          EXPECT_EQ(emulated[4 * b + 3], -2.0f);
          continue;
        }
        if (lo[0] < 0 || lo[1] < 0 || lo[2] < 0 || hi[0] >= dims.x || hi[1] >= dims.y || hi[2] >= dims.z) continue;
        ++found;
        EXPECT_EQ(out[4 * b + 0], t[0]);
        EXPECT_EQ(out[4 * b + 1], t[1]);
        EXPECT_EQ(out[4 * b + 2], t[2]);
        EXPECT_NEAR(out[4 * b + 3], 1.0, 1e-12);
        EXPECT_EQ(emulated[4 * b + 0], static_cast<float>(t[0]));
        EXPECT_EQ(emulated[4 * b + 2], static_cast<float>(t[2]));
        EXPECT_NEAR(emulated[4 * b + 3], 1.0, 1e-5);
      }
  EXPECT_GT(found, 150u);
}

TEST(SeedsResamplingBlockMatching, BlocksOutsideTheMaskOrFlatGetTheMarker) {
  const Dim3 dims{16, 12, 8};  // 4 x 3 x 2 blocks
  auto reference = random_image(dims, 21);
  const auto warped = random_image(dims, 22);
  std::vector<std::int32_t> mask(dims.voxels(), 1);
  // Block (0, 0, 0): 31 voxels in the mask (one short of 32).
  int removed = 0;
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x)
        if (removed < 33) {
          mask[dims.index(x, y, z)] = 0;
          ++removed;
        }
  // Block (1, 0, 0): constant reference.
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 4; x < 8; ++x) reference[dims.index(x, y, z)] = 42.0f;
  const auto out = find_reference("ncc_block_matching")(block_matching_workload(dims, reference, warped, mask, 32, 2))
                       .at("blockResults");
  ASSERT_EQ(out.size(), 4u * 24u);
  for (std::size_t b = 0; b < 24; ++b) {
    if (b <= 1) {
      EXPECT_EQ(out[4 * b + 0], 0.0);
      EXPECT_EQ(out[4 * b + 1], 0.0);
      EXPECT_EQ(out[4 * b + 2], 0.0);
      EXPECT_EQ(out[4 * b + 3], -2.0) << b;
    } else {
      // Random images: some best match, in range, with a valid NCC.
      EXPECT_GE(out[4 * b + 3], -1.0) << b;
      EXPECT_LE(out[4 * b + 3], 1.0) << b;
      for (int c = 0; c < 3; ++c) EXPECT_LE(std::fabs(out[4 * b + static_cast<std::size_t>(c)]), 2.0);
    }
  }
  // With 31 voxels required instead of 32, block 0 is used.
  const auto looser =
      find_reference("ncc_block_matching")(block_matching_workload(dims, reference, warped, mask, 31, 2))
          .at("blockResults");
  EXPECT_GE(looser[3], -1.0);
}

TEST(SeedsResamplingBlockMatching, GeneratorGivesMeaningfulWellSeparatedMatches) {
  const json variables = {{"dim", {48, 44, 40}}, {"mask", "brain"}, {"amplitude", 2}};
  const Workload a = generate("block_matching_brain", variables, 31),
                 b = generate("block_matching_brain", variables, 31),
                 c = generate("block_matching_brain", variables, 32);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.variables, b.variables);
  for (const auto& [name, bytes] : a.inputs) EXPECT_NE(bytes, c.inputs.at(name)) << name;
  const Dim3 dims{48, 44, 40};
  EXPECT_EQ(a.variables.at("blockNumber"), 12 * 11 * 10);
  const auto reference = from_bytes<float>(a.inputs.at("referenceImage"), "reference");
  const auto warped = from_bytes<float>(a.inputs.at("warpedImage"), "warped");
  const auto mask = from_bytes<std::int32_t>(a.inputs.at("mask"), "mask");
  EXPECT_EQ(reference, gi::seeds::tissue_image(dims, 31));
  EXPECT_NE(warped, reference);
  const auto matches = gi::seeds::ncc_block_search(reference, warped, mask, dims, 32, 3);
  std::size_t used = 0, good = 0, moved = 0;
  double used_voxels = 0;
  for (const auto& m : matches) {
    if (!m.used) continue;
    ++used;
    used_voxels += m.voxels;
    EXPECT_GE(m.ncc - m.runner_up, 1e-4);  // near ties were taken out of the mask
    good += m.ncc > 0.5 ? 1 : 0;
    moved += m.displacement[0] != 0 || m.displacement[1] != 0 || m.displacement[2] != 0 ? 1 : 0;
  }
  EXPECT_EQ(static_cast<double>(used), a.variables.at("usedBlockNumber"));
  EXPECT_EQ(used_voxels, a.variables.at("usedBlockVoxelNumber"));
  EXPECT_GT(used, 100u);
  EXPECT_LT(a.variables.at("nearTieBlockNumber"), 0.02 * static_cast<double>(used));  // rare
  EXPECT_GT(good, used * 6 / 10);  // the warped image is the reference moved: strong matches
  EXPECT_GT(moved, used / 2);      // ... by a displacement of about 2 voxels
  // W(x) = R(x + u(x)), so block v matches at d = -u(v) up to rounding. The
  // aperture problem (a block on a flat interface matches along it) and the
  // noise make many blocks miss it, but far more hit it (within a voxel)
  // than random matches in [-3, 3]^3 would (about 8%); strong matches more so.
  const gi::seeds::BlockMatchDisplacement u(dims, 2, 31);
  const Dim3 blocks = gi::seeds::match_block_dims(dims);
  std::size_t hit = 0, strong = 0, strong_hit = 0;
  for (std::size_t t = 0; t < matches.size(); ++t) {
    if (!matches[t].used) continue;
    const int x = 4 * static_cast<int>(t % static_cast<std::size_t>(blocks.x)) + 2;
    const int y =
        4 * static_cast<int>((t / static_cast<std::size_t>(blocks.x)) % static_cast<std::size_t>(blocks.y)) + 2;
    const int z = 4 * static_cast<int>(t / static_cast<std::size_t>(blocks.x * blocks.y)) + 2;
    const auto d = u.at(std::min(x, dims.x - 1), std::min(y, dims.y - 1), std::min(z, dims.z - 1));
    double miss = 0;
    for (int k = 0; k < 3; ++k)
      miss = std::max(miss, std::fabs(matches[t].displacement[k] + d[static_cast<std::size_t>(k)]));
    hit += miss <= 1 ? 1 : 0;
    if (matches[t].ncc > 0.8) {
      ++strong;
      strong_hit += miss <= 1 ? 1 : 0;
    }
  }
  EXPECT_GT(hit, used * 35 / 100) << hit << " of " << used;
  EXPECT_GT(strong, 50u);
  EXPECT_GT(strong_hit, strong / 2) << strong_hit << " of " << strong;
  // Without displacement the blocks stay where they are.
  json still = variables;
  still["amplitude"] = 0;
  const Workload s = generate("block_matching_brain", still, 31);
  std::size_t used_still = 0, zero = 0;
  for (const auto& m :
       gi::seeds::ncc_block_search(reference, from_bytes<float>(s.inputs.at("warpedImage"), "warped"),
                                   from_bytes<std::int32_t>(s.inputs.at("mask"), "mask"), dims, 32, 3)) {
    if (!m.used) continue;
    ++used_still;
    zero += m.displacement[0] == 0 && m.displacement[1] == 0 && m.displacement[2] == 0 ? 1 : 0;
  }
  EXPECT_GT(zero, used_still * 9 / 10) << zero << " of " << used_still;
  EXPECT_THROW(generate("block_matching_brain", {{"search_radius", 20}}, 1), std::runtime_error);
}

// ---------------------------------------------- float emulation vs tolerance

TEST(SeedsResamplingFloat, KernelArithmeticPassesTheSpecTolerance) {
  struct Case {
    const char* dir;
    json variables;
  };
  const std::vector<Case> cases = {
      {"resampling/cubic_bspline", {{"dim", {45, 41, 37}}, {"mask", "brain"}}},
      {"resampling/cubic_bspline",
       {{"dim", {36, 30, 28}}, {"floating_dim", {40, 26, 30}}, {"mask", "full"}, {"padding", -4}}},
      {"resampling/warped_gradient", {{"dim", {45, 41, 37}}, {"mask", "brain"}}},
      {"resampling/warped_gradient",
       {{"dim", {36, 30, 28}}, {"floating_dim", {40, 26, 30}}, {"mask", "full"}, {"amplitude", 5}}},
      {"blockmatching/ncc_block_matching", {{"dim", {48, 44, 40}}, {"mask", "brain"}}},
      {"blockmatching/ncc_block_matching", {{"dim", {30, 27, 25}}, {"mask", "full"}, {"noise", 5}, {"min_voxels", 10}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dir) + " " + c.variables.dump());
    const KernelSpec spec = spec_of(c.dir);
    WorkloadSpec ws = spec.train;
    ws.variables = c.variables;
    const Workload w = generate_workload(spec, ws, 21);
    for (const bool fma : {false, true}) {
      const ErrorStats s = emulate_and_compare(spec, w, fma);
      EXPECT_EQ(s.failures, 0u) << spec.entry << (fma ? " (fma)" : "") << ": " << s.first_failure;
      EXPECT_GT(s.values, 1000u);
    }
  }
}

// The typical bug - an input read one element off - must fail on most values.
TEST(SeedsResamplingFloat, ToleranceCatchesOffByOneReads) {
  struct Case {
    const char* dir;
    json variables;
    const char* input;
    std::size_t element_bytes;
  };
  const std::vector<Case> cases = {
      {"resampling/cubic_bspline", {{"dim", {30, 26, 22}}, {"mask", "brain"}}, "floatingCoefficients", 4},
      {"resampling/warped_gradient", {{"dim", {30, 26, 22}}, {"mask", "brain"}}, "floatingImage", 4},
      {"blockmatching/ncc_block_matching", {{"dim", {40, 36, 32}}, {"mask", "brain"}}, "warpedImage", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dir);
    const KernelSpec spec = spec_of(c.dir);
    WorkloadSpec ws = spec.train;
    ws.variables = c.variables;
    Workload w = generate_workload(spec, ws, 1);
    const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
    auto& bytes = w.inputs.at(c.input);
    std::rotate(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(c.element_bytes), bytes.end());
    const std::size_t components = element_components(spec.find_parameter(expected[0].buffer)->type);
    ErrorStats s = compare(emulate(spec.entry, w, false), expected[0], components, spec.tolerance);
    if (spec.entry == "ncc_block_matching") {
      // Unused blocks keep the marker whatever the data; count the used ones.
      const auto out = emulate(spec.entry, w, false);
      std::size_t used = 0, wrong = 0;
      for (std::size_t b = 0; b < out.size() / 4; ++b) {
        if (expected[0].values[4 * b + 3] == gi::seeds::kNoMatchNcc) continue;
        ++used;
        bool ok = true;
        for (int k = 0; k < 4; ++k) {
          const double ref = expected[0].values[4 * b + static_cast<std::size_t>(k)];
          ok = ok && std::fabs(out[4 * b + static_cast<std::size_t>(k)] - ref) <=
                         spec.tolerance.abs + spec.tolerance.rel * std::fabs(ref);
        }
        wrong += ok ? 0 : 1;
      }
      EXPECT_GT(used, 50u);
      EXPECT_GT(wrong, used / 2) << wrong << " of " << used << " used blocks";
    } else {
      EXPECT_GT(s.failures, s.values / 2) << s.failures << " of " << s.values;
    }
  }
}

TEST(SeedsResamplingSpecs, LoadWithEnoughHeldOutWorkloads) {
  for (const char* dir : kDirs) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = spec_of(dir);
    EXPECT_GE(spec.validate.size(), 5u);
    EXPECT_TRUE(has_generator(spec.train.generator));
    EXPECT_TRUE(has_reference(spec.entry));
  }
}

// Not run by default: the float-vs-double errors the specs' tolerance notes
// record, on the training workload (two seeds) and every held-out workload.
TEST(SeedsResamplingFloat, DISABLED_MeasureTrainingWorkloadErrors) {
  for (const char* dir : kDirs) {
    const KernelSpec spec = spec_of(dir);
    std::vector<std::pair<std::string, std::uint64_t>> runs = {{"train", 1}, {"train", 2}};
    for (std::size_t v = 0; v < spec.validate.size(); ++v) runs.emplace_back("validate:" + std::to_string(v), 0);
    for (const auto& [which, seed] : runs) {
      const WorkloadSpec& ws = spec.workload(which);
      const std::uint64_t generator_seed = which == "train" ? seed : ws.seed;
      auto t0 = std::chrono::steady_clock::now();
      const Workload w = generate_workload(spec, ws, generator_seed);
      auto t1 = std::chrono::steady_clock::now();
      const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
      auto t2 = std::chrono::steady_clock::now();
      const std::size_t components = element_components(spec.find_parameter(expected[0].buffer)->type);
      for (const bool fma : {false, true}) {
        const ErrorStats s = compare(emulate(spec.entry, w, fma), expected[0], components, spec.tolerance);
        std::cout << "[ info ] " << spec.entry << " " << which << " seed " << generator_seed
                  << (fma ? " fma   " : " no-fma") << ": " << s.values << " values, max abs " << s.max_abs
                  << ", max rel " << s.max_rel << ", largest |ref| " << s.largest_reference << ", margin "
                  << 1.0 / s.worst_fraction << "\n";
        EXPECT_EQ(s.failures, 0u) << s.first_failure;
      }
      std::cout << "[ info ]   generate " << std::chrono::duration<double>(t1 - t0).count() << " s, reference "
                << std::chrono::duration<double>(t2 - t1).count() << " s";
      if (spec.entry == "ncc_block_matching")
        std::cout << ", used blocks " << w.variables.at("usedBlockNumber") << " of " << w.variables.at("blockNumber")
                  << ", near ties taken out " << w.variables.at("nearTieBlockNumber");
      std::cout << "\n";
    }
  }
}

// ------------------------------------------------------------ training checks
// Each train_check reaches the case its purpose names (checked on the
// generated data, without a GPU), and the seed's float arithmetic passes it
// with the workload's own tolerance.

TEST(SeedsResamplingTrainingChecks, SeedArithmeticPassesEveryCheckWithItsTolerance) {
  std::size_t checks = 0;
  for (const char* dir : kDirs) {
    const KernelSpec spec = spec_of(dir);
    for (const WorkloadSpec& ws : spec.train_checks) {
      SCOPED_TRACE(std::string(dir) + " " + ws.json_path);
      ++checks;
      for (const std::uint64_t seed : {3u, 4u}) {
        const Workload w = generate_workload(spec, ws, seed);
        const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
        for (const bool fma : {false, true}) {
          const ErrorStats s = compare(emulate(spec.entry, w, fma), expected[0],
                                       components_of(spec, expected[0].buffer), spec.tolerance_of(ws));
          EXPECT_EQ(s.failures, 0u) << (fma ? "fma: " : "") << s.first_failure;
          EXPECT_GT(s.values, 0u);
        }
      }
    }
  }
  EXPECT_GE(checks, 4u);
}

// The inside test of the resampling kernels is a chain
//   X >= 0 && X < dimX && Y >= 0 && Y < dimY && Z >= 0 && Z < dimZ;
// operand k is false (and so evaluated false) when the ones before it hold
// and it does not. Counts, per operand, the samples (voxel, corner) at which
// it is the first false one; corners are floor(p) + first .. floor(p) + last.
std::array<std::size_t, 6> first_false_operands(const std::vector<Float4>& positions, Dim3 floating, int first,
                                                int last) {
  std::array<std::size_t, 6> count{};
  const int extent[3] = {floating.x, floating.y, floating.z};
  for (const Float4& p : positions) {
    const int pre[3] = {static_cast<int>(std::floor(p.x)), static_cast<int>(std::floor(p.y)),
                        static_cast<int>(std::floor(p.z))};
    for (int c = first; c <= last; ++c)
      for (int b = first; b <= last; ++b)
        for (int a = first; a <= last; ++a) {
          const int at[3] = {pre[0] + a, pre[1] + b, pre[2] + c};
          for (std::size_t k = 0; k < 6; ++k) {
            const int v = at[k / 2];
            const bool holds = k % 2 == 0 ? v >= 0 : v < extent[k / 2];
            if (!holds) {
              ++count[k];
              break;
            }
          }
        }
  }
  return count;
}

TEST(SeedsResamplingTrainingChecks, SamplesLeaveTheFloatingImageThroughEveryFace) {
  struct Case {
    const char* dir;
    int first, last;  // corners around floor(position)
    bool padded;
  };
  // warped_image_gradient tests the cell: xPre >= 0 && xPre + 1 < dimX ...,
  // i.e. corners 0 and 1 of the trilinear cell.
  for (const Case& c : {Case{"resampling/trilinear", 0, 1, true}, Case{"resampling/cubic_bspline", -1, 2, true},
                        Case{"resampling/warped_gradient", 0, 1, false}}) {
    SCOPED_TRACE(c.dir);
    const KernelSpec spec = spec_of(c.dir);
    for (const std::uint64_t seed : {1u, 2u}) {
      const Workload w = generate_workload(spec, training_check(spec, {{"mask", "full"}}), seed);
      const Dim3 floating{static_cast<int>(w.variables.at("floatingDimX")),
                          static_cast<int>(w.variables.at("floatingDimY")),
                          static_cast<int>(w.variables.at("floatingDimZ"))};
      const auto positions = from_bytes<Float4>(w.inputs.at("deformationField"), "deformationField");
      const auto count = first_false_operands(positions, floating, c.first, c.last);
      for (std::size_t k = 0; k < 6; ++k) EXPECT_GT(count[k], 0u) << "operand " << k << ", seed " << seed;
      if (c.padded) {
        EXPECT_NE(w.variables.at("paddingValue"), 0.0);
      }
    }
  }
  // The brain-masked training workload never leaves the image (why the check exists).
  const Workload train = generate("cubic_bspline_brain", {{"dim", {61, 67, 59}}, {"spacing", 5}, {"amplitude", 3}}, 1);
  const auto count = first_false_operands(from_bytes<Float4>(train.inputs.at("deformationField"), "positions"),
                                          Dim3{61, 67, 59}, -1, 2);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(count[k], 0u) << "operand " << k;
}

// Block matching's checks, following the kernel's tests block by block: cut
// blocks that are used, candidates leaving each face, empty blocks, blocks of
// constant reference intensity and candidates of constant warped intensity.
struct BlockCases {
  std::size_t cut_used[3] = {0, 0, 0};   // used blocks reaching past the image on x, y, z
  std::array<std::size_t, 6> outside{};  // (used block, voxel, displacement): first false operand of the inside test
  std::size_t empty = 0;                 // blocks without mask voxels (voxelNumber > 0 false when min is 0)
  std::size_t flat = 0;                  // blocks with enough voxels and zero reference variance
  std::size_t flat_candidates = 0;       // candidates inside the image of a used block, warped intensity constant
};

BlockCases block_cases(const Workload& w) {
  const Dim3 d{static_cast<int>(w.variables.at("imageDimX")), static_cast<int>(w.variables.at("imageDimY")),
               static_cast<int>(w.variables.at("imageDimZ"))};
  const int min_voxels = static_cast<int>(w.variables.at("minimumVoxelNumber"));
  const int radius = static_cast<int>(w.variables.at("searchRadius"));
  const auto reference = from_bytes<float>(w.inputs.at("referenceImage"), "reference");
  const auto warped = from_bytes<float>(w.inputs.at("warpedImage"), "warped");
  const auto mask = from_bytes<std::int32_t>(w.inputs.at("mask"), "mask");
  const Dim3 blocks = gi::seeds::match_block_dims(d);
  const int extent[3] = {d.x, d.y, d.z};
  BlockCases out;
  for (int bz = 0; bz < blocks.z; ++bz)
    for (int by = 0; by < blocks.y; ++by)
      for (int bx = 0; bx < blocks.x; ++bx) {
        std::vector<std::array<int, 3>> voxels;
        for (int c = 0; c < 4; ++c)
          for (int b = 0; b < 4; ++b)
            for (int a = 0; a < 4; ++a) {
              const std::array<int, 3> v = {4 * bx + a, 4 * by + b, 4 * bz + c};
              if (v[0] < d.x && v[1] < d.y && v[2] < d.z && mask[d.index(v[0], v[1], v[2])] != 0) voxels.push_back(v);
            }
        if (voxels.empty()) ++out.empty;
        if (voxels.empty() || static_cast<int>(voxels.size()) < min_voxels) continue;
        const float first = reference[d.index(voxels[0][0], voxels[0][1], voxels[0][2])];
        if (std::all_of(voxels.begin(), voxels.end(),
                        [&](const auto& v) { return reference[d.index(v[0], v[1], v[2])] == first; })) {
          ++out.flat;
          continue;
        }
        const int origin[3] = {4 * bx, 4 * by, 4 * bz};
        for (int axis = 0; axis < 3; ++axis) out.cut_used[axis] += origin[axis] + 3 >= extent[axis] ? 1 : 0;
        for (int k = -radius; k <= radius; ++k)
          for (int j = -radius; j <= radius; ++j)
            for (int i = -radius; i <= radius; ++i) {
              const int shift[3] = {i, j, k};
              bool inside = true;
              for (const auto& v : voxels)
                for (std::size_t op = 0; op < 6; ++op) {
                  const int moved = v[op / 2] + shift[op / 2];
                  if (!(op % 2 == 0 ? moved >= 0 : moved < extent[op / 2])) {
                    ++out.outside[op];
                    inside = false;
                    break;
                  }
                }
              if (!inside) continue;
              const float w0 = warped[d.index(voxels[0][0] + i, voxels[0][1] + j, voxels[0][2] + k)];
              out.flat_candidates += std::all_of(voxels.begin(), voxels.end(), [&](const auto& v) {
                return warped[d.index(v[0] + i, v[1] + j, v[2] + k)] == w0;
              });
            }
      }
  return out;
}

TEST(SeedsResamplingTrainingChecks, BlockMatchingChecksReachCutBlocksEmptyBlocksAndFlatIntensities) {
  const KernelSpec spec = spec_of("blockmatching/ncc_block_matching");
  for (const std::uint64_t seed : {1u, 2u}) {
    SCOPED_TRACE(seed);
    const BlockCases border = block_cases(generate_workload(spec, training_check(spec, {{"mask", "full"}}), seed));
    for (int axis = 0; axis < 3; ++axis) EXPECT_GT(border.cut_used[axis], 0u) << "axis " << axis;
    for (std::size_t op = 0; op < 6; ++op) EXPECT_GT(border.outside[op], 0u) << "operand " << op;
    const BlockCases flat =
        block_cases(generate_workload(spec, training_check(spec, {{"skull_stripped", true}}), seed));
    EXPECT_GT(flat.empty, 0u);
    EXPECT_GT(flat.flat, 0u);
    EXPECT_GT(flat.flat_candidates, 0u);
  }
}

}  // namespace
