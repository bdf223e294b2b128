// The seeds' CPU references and workload generators: analytic cases for each
// reference, the realism and size of the workloads, determinism, the
// reference cache, and float emulations of the seed kernels that must pass the
// specs' tolerances (what makes those tolerances honest).
//
// The float-vs-double errors recorded in the specs' tolerance notes come from
//   gi_tests --gtest_also_run_disabled_tests --gtest_filter='*MeasureTrainingWorkload*'
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "float_emulation.hpp"
#include "fitness/workload/reference_cache.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/volume.hpp"

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
using nlohmann::json;

const fs::path kSeeds = fs::path(GI_SOURCE_DIR) / "seeds";

KernelSpec spec_of(const char* dir) { return load_kernel_spec(kSeeds / dir); }

Workload generate(const char* generator, const json& variables, std::uint64_t seed) {
  return find_generator(generator)(variables, seed);
}

// ------------------------------------------------------------ float emulation
// The seed kernels' arithmetic in float, statement by statement. `Fma` models
// the GPU compiler contracting a multiply-add into one fused operation (it
// does by default), which rounds differently; both variants must pass.

void basis_f(float u, float* basis) {
  const float u2 = u * u;
  const float u3 = u2 * u;
  const float v = 1.0f - u;
  basis[0] = v * v * v / 6.0f;
  basis[1] = (3.0f * u3 - 6.0f * u2 + 4.0f) / 6.0f;
  basis[2] = (-3.0f * u3 + 3.0f * u2 + 3.0f * u + 1.0f) / 6.0f;
  basis[3] = u3 / 6.0f;
}

template <bool Fma>
std::vector<float> emulate_bspline(const Workload& w) {
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  const int dimX = static_cast<int>(w.variables.at("imageDimX")), dimY = static_cast<int>(w.variables.at("imageDimY"));
  const int cpX = static_cast<int>(w.variables.at("controlPointDimX"));
  const int cpY = static_cast<int>(w.variables.at("controlPointDimY"));
  const auto sx = static_cast<float>(w.variables.at("spacingX")), sy = static_cast<float>(w.variables.at("spacingY")),
             sz = static_cast<float>(w.variables.at("spacingZ"));
  std::vector<float> out(active.size() * 4);
  gi::seeds::parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t tid = begin; tid < end; ++tid) {
      int index = active[tid];
      const int z = index / (dimX * dimY);
      index = index - z * dimX * dimY;
      const int y = index / dimX;
      const int x = index - y * dimX;
      const float gx = static_cast<float>(x) / sx, gy = static_cast<float>(y) / sy, gz = static_cast<float>(z) / sz;
      const int xPre = static_cast<int>(std::floor(gx)), yPre = static_cast<int>(std::floor(gy)),
                zPre = static_cast<int>(std::floor(gz));
      float xb[4], yb[4], zb[4];
      basis_f(gx - static_cast<float>(xPre), xb);
      basis_f(gy - static_cast<float>(yPre), yb);
      basis_f(gz - static_cast<float>(zPre), zb);
      float dx = 0.0f, dy = 0.0f, dz = 0.0f;
      for (int c = 0; c < 4; c++)
        for (int b = 0; b < 4; b++)
          for (int a = 0; a < 4; a++) {
            const Float4& p = grid[static_cast<std::size_t>(((zPre + c) * cpY + yPre + b) * cpX + xPre + a)];
            const float weight = xb[a] * yb[b] * zb[c];
            dx = multiply_add<Fma>(weight, p.x, dx);
            dy = multiply_add<Fma>(weight, p.y, dy);
            dz = multiply_add<Fma>(weight, p.z, dz);
          }
      out[4 * tid + 0] = static_cast<float>(x) + dx;
      out[4 * tid + 1] = static_cast<float>(y) + dy;
      out[4 * tid + 2] = static_cast<float>(z) + dz;
      out[4 * tid + 3] = 0.0f;
    }
  });
  return out;
}

template <bool Fma>
std::vector<float> emulate_trilinear(const Workload& w) {
  const auto image = from_bytes<float>(w.inputs.at("floatingImage"), "image");
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "field");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  const int fx = static_cast<int>(w.variables.at("floatingDimX")), fy = static_cast<int>(w.variables.at("floatingDimY")),
            fz = static_cast<int>(w.variables.at("floatingDimZ"));
  const auto padding = static_cast<float>(w.variables.at("paddingValue"));
  std::vector<float> out(static_cast<std::size_t>(w.variables.at("referenceVoxelNumber")),
                         std::numeric_limits<float>::quiet_NaN());
  gi::seeds::parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t tid = begin; tid < end; ++tid) {
      const Float4 p = field[tid];
      const int xPre = static_cast<int>(std::floor(p.x)), yPre = static_cast<int>(std::floor(p.y)),
                zPre = static_cast<int>(std::floor(p.z));
      const float relX = p.x - static_cast<float>(xPre), relY = p.y - static_cast<float>(yPre),
                  relZ = p.z - static_cast<float>(zPre);
      const float xw[2] = {1.0f - relX, relX}, yw[2] = {1.0f - relY, relY}, zw[2] = {1.0f - relZ, relZ};
      float value = 0.0f;
      for (int c = 0; c < 2; c++)
        for (int b = 0; b < 2; b++)
          for (int a = 0; a < 2; a++) {
            const int X = xPre + a, Y = yPre + b, Z = zPre + c;
            const float intensity = X >= 0 && X < fx && Y >= 0 && Y < fy && Z >= 0 && Z < fz
                                        ? image[static_cast<std::size_t>((Z * fy + Y) * fx + X)]
                                        : padding;
            value = multiply_add<Fma>(xw[a] * yw[b] * zw[c], intensity, value);
          }
      out[static_cast<std::size_t>(active[tid])] = value;
    }
  });
  return out;
}

template <bool Fma>
std::vector<float> emulate_convolution(const Workload& w) {
  const auto input = from_bytes<Float4>(w.inputs.at("input"), "input");
  const auto weights = from_bytes<float>(w.inputs.at("kernelWeights"), "weights");
  const int dimX = static_cast<int>(w.variables.at("imageDimX"));
  const int radius = static_cast<int>(w.variables.at("kernelRadius"));
  std::vector<float> out(input.size() * 4);
  gi::seeds::parallel_for(input.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int tid = static_cast<int>(t);
      const int x = tid % dimX;
      float sx = 0.0f, sy = 0.0f, sz = 0.0f, weightSum = 0.0f;
      for (int i = -radius; i <= radius; i++) {
        const int X = x + i;
        if (X >= 0 && X < dimX) {
          const float weight = weights[static_cast<std::size_t>(i + radius)];
          const Float4& n = input[static_cast<std::size_t>(tid + i)];
          sx = multiply_add<Fma>(weight, n.x, sx);
          sy = multiply_add<Fma>(weight, n.y, sy);
          sz = multiply_add<Fma>(weight, n.z, sz);
          weightSum += weight;
        }
      }
      out[4 * t + 0] = weightSum != 0.0f ? sx / weightSum : 0.0f;
      out[4 * t + 1] = weightSum != 0.0f ? sy / weightSum : 0.0f;
      out[4 * t + 2] = weightSum != 0.0f ? sz / weightSum : 0.0f;
      out[4 * t + 3] = 0.0f;
    }
  });
  return out;
}

std::vector<float> emulate(const std::string& entry, const Workload& w, bool fma) {
  if (entry == "bspline_deformation_field") return fma ? emulate_bspline<true>(w) : emulate_bspline<false>(w);
  if (entry == "trilinear_resample") return fma ? emulate_trilinear<true>(w) : emulate_trilinear<false>(w);
  if (entry == "convolution_x") return fma ? emulate_convolution<true>(w) : emulate_convolution<false>(w);
  throw std::runtime_error("no emulation for " + entry);
}

// ------------------------------------------------------------------ B-spline

TEST(BsplineReference, ZeroDisplacementGivesTheVoxelPosition) {
  const Workload w = generate("bspline_brain", {{"dim", {23, 19, 17}}, {"spacing", {5, 4, 7.5}}, {"amplitude", 0},
                                                {"mask", "full"}},
                              1);
  const auto ref = find_reference("bspline_deformation_field")(w).at("deformationField");
  ASSERT_EQ(ref.size(), 23u * 19u * 17u * 4u);
  std::size_t t = 0;
  for (int z = 0; z < 17; ++z)
    for (int y = 0; y < 19; ++y)
      for (int x = 0; x < 23; ++x, ++t) {
        ASSERT_EQ(ref[4 * t + 0], x);
        ASSERT_EQ(ref[4 * t + 1], y);
        ASSERT_EQ(ref[4 * t + 2], z);
        ASSERT_EQ(ref[4 * t + 3], 0);
      }
}

TEST(BsplineReference, ConstantDisplacementIsAddedToThePosition) {
  Workload w = generate("bspline_brain", {{"dim", {21, 18, 15}}, {"spacing", 4}, {"mask", "brain"}}, 2);
  auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  for (Float4& p : grid) p = Float4{1.5f, -2.25f, 0.75f, 9.0f};  // w is never read
  w.inputs["controlPointGrid"] = to_bytes(grid);
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  ASSERT_FALSE(active.empty());
  const auto ref = find_reference("bspline_deformation_field")(w).at("deformationField");
  for (std::size_t t = 0; t < active.size(); ++t) {
    const int i = active[t], x = i % 21, y = (i / 21) % 18, z = i / (21 * 18);
    ASSERT_NEAR(ref[4 * t + 0], x + 1.5, 1e-12);
    ASSERT_NEAR(ref[4 * t + 1], y - 2.25, 1e-12);
    ASSERT_NEAR(ref[4 * t + 2], z + 0.75, 1e-12);
    ASSERT_EQ(ref[4 * t + 3], 0);
  }
}

// Cubic B-splines reproduce linear functions: control points displaced by
// 0.1 times their own position (i - 1) * spacing scale every voxel by 1.1.
TEST(BsplineReference, DisplacementProportionalToControlPointPositionScalesTheImage) {
  Workload w = generate("bspline_brain", {{"dim", {20, 16, 12}}, {"spacing", {5, 4, 2.5}}, {"mask", "full"}}, 3);
  const int cx = static_cast<int>(w.variables.at("controlPointDimX"));
  const int cy = static_cast<int>(w.variables.at("controlPointDimY"));
  const int cz = static_cast<int>(w.variables.at("controlPointDimZ"));
  std::vector<Float4> grid(static_cast<std::size_t>(cx * cy * cz));
  for (int k = 0; k < cz; ++k)
    for (int j = 0; j < cy; ++j)
      for (int i = 0; i < cx; ++i)
        grid[static_cast<std::size_t>((k * cy + j) * cx + i)] =
            Float4{0.1f * (i - 1) * 5.0f, 0.1f * (j - 1) * 4.0f, 0.1f * (k - 1) * 2.5f, 0.0f};
  w.inputs["controlPointGrid"] = to_bytes(grid);
  const auto ref = find_reference("bspline_deformation_field")(w).at("deformationField");
  std::size_t t = 0;
  for (int z = 0; z < 12; ++z)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 20; ++x, ++t) {
        // float control points: 0.1f * n is not exactly n / 10
        ASSERT_NEAR(ref[4 * t + 0], 1.1 * x, 1e-5);
        ASSERT_NEAR(ref[4 * t + 1], 1.1 * y, 1e-5);
        ASSERT_NEAR(ref[4 * t + 2], 1.1 * z, 1e-5);
      }
}

TEST(BsplineReference, GridTooSmallForTheImageIsAnError) {
  Workload w = generate("bspline_brain", {{"dim", 12}, {"mask", "full"}}, 1);
  w.variables["controlPointDimX"] -= 1;
  EXPECT_THROW(find_reference("bspline_deformation_field")(w), std::runtime_error);
}

TEST(BsplineGenerator, ControlGridFollowsTheKernelsConvention) {
  // floor((dim - 1) / spacing) + 4 per axis: 47 for 217 voxels at spacing 5.
  const Workload w = generate("bspline_brain", {{"dim", {217, 97, 160}}, {"spacing", {5, 7.5, 4}}, {"mask", "sphere"}}, 1);
  EXPECT_EQ(w.variables.at("controlPointDimX"), 47);
  EXPECT_EQ(w.variables.at("controlPointDimY"), 16);  // floor(96 / 7.5) + 4
  EXPECT_EQ(w.variables.at("controlPointDimZ"), 43);  // floor(159 / 4) + 4
  EXPECT_EQ(w.variables.at("spacingY"), 7.5);
  // Displacements of a few voxels, not zero, w = 0.
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  double largest = 0;
  for (const Float4& p : grid) {
    largest = std::max({largest, std::fabs(double{p.x}), std::fabs(double{p.y}), std::fabs(double{p.z})});
    ASSERT_EQ(p.w, 0.0f);
  }
  EXPECT_GT(largest, 1.0);
  EXPECT_LE(largest, 3.0);
}

// ----------------------------------------------------------------- trilinear

Workload trilinear_workload(Dim3 dims, const std::vector<float>& image, const std::vector<Float4>& positions,
                            const std::vector<std::int32_t>& active, float padding) {
  Workload w;
  w.variables = {{"referenceDimX", dims.x}, {"referenceDimY", dims.y}, {"referenceDimZ", dims.z},
                 {"referenceVoxelNumber", static_cast<double>(dims.voxels())},
                 {"floatingDimX", dims.x}, {"floatingDimY", dims.y}, {"floatingDimZ", dims.z},
                 {"floatingVoxelNumber", static_cast<double>(dims.voxels())},
                 {"activeVoxelNumber", static_cast<double>(active.size())}, {"paddingValue", padding}};
  w.inputs["floatingImage"] = to_bytes(image);
  w.inputs["deformationField"] = to_bytes(positions);
  w.inputs["activeVoxels"] = to_bytes(active);
  return w;
}

TEST(TrilinearReference, IdentityReturnsTheImageAndOutsideGivesPadding) {
  const Dim3 dims{7, 6, 5};
  std::vector<float> image(dims.voxels());
  std::mt19937 rng(5);
  for (float& v : image) v = std::uniform_real_distribution<float>(0, 100)(rng);
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;
  for (int z = 0; z < dims.z; ++z)
    for (int y = 0; y < dims.y; ++y)
      for (int x = 0; x < dims.x; ++x)
        if ((x + y + z) % 3 != 0) {
          active.push_back(static_cast<std::int32_t>(dims.index(x, y, z)));
          positions.push_back(Float4{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z), 0});
        }
  // Three voxels map elsewhere: far outside, half a voxel outside in x, and a
  // quarter voxel beyond the last column.
  const std::size_t far = 0, half = 1, quarter = 2;
  positions[far] = Float4{-3.0f, 2.0f, 2.0f, 0};
  positions[half] = Float4{-0.5f, 2.0f, 2.0f, 0};
  positions[quarter] = Float4{6.25f, 1.0f, 1.0f, 0};
  const float padding = -7.0f;
  const auto out = find_reference("trilinear_resample")(trilinear_workload(dims, image, positions, active, padding))
                       .at("warpedImage");
  ASSERT_EQ(out.size(), dims.voxels());
  for (std::size_t t = 3; t < active.size(); ++t) ASSERT_EQ(out[static_cast<std::size_t>(active[t])], image[static_cast<std::size_t>(active[t])]);
  EXPECT_EQ(out[static_cast<std::size_t>(active[far])], padding);
  EXPECT_NEAR(out[static_cast<std::size_t>(active[half])], 0.5 * padding + 0.5 * image[dims.index(0, 2, 2)], 1e-12);
  EXPECT_NEAR(out[static_cast<std::size_t>(active[quarter])], 0.75 * image[dims.index(6, 1, 1)] + 0.25 * padding,
              1e-12);
  // Non-active voxels are not written.
  std::size_t unwritten = 0;
  for (double v : out) unwritten += std::isnan(v) ? 1 : 0;
  EXPECT_EQ(unwritten, dims.voxels() - active.size());
}

TEST(TrilinearReference, ReproducesALinearImageBetweenVoxels) {
  const Dim3 dims{9, 8, 7};
  std::vector<float> image(dims.voxels());
  for (int z = 0; z < dims.z; ++z)
    for (int y = 0; y < dims.y; ++y)
      for (int x = 0; x < dims.x; ++x) image[dims.index(x, y, z)] = static_cast<float>(2 * x + 3 * y - z + 5);
  std::mt19937 rng(9);
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(dims.voxels()); i += 2) {
    active.push_back(i);
    positions.push_back(Float4{std::uniform_real_distribution<float>(0, 8)(rng),
                               std::uniform_real_distribution<float>(0, 7)(rng),
                               std::uniform_real_distribution<float>(0, 6)(rng), 0});
  }
  const auto out =
      find_reference("trilinear_resample")(trilinear_workload(dims, image, positions, active, 0)).at("warpedImage");
  for (std::size_t t = 0; t < active.size(); ++t) {
    const Float4& p = positions[t];
    ASSERT_NEAR(out[static_cast<std::size_t>(active[t])], 2.0 * p.x + 3.0 * p.y - p.z + 5, 1e-9);
  }
}

TEST(TrilinearGenerator, PositionsComeFromASmoothDeformationNearTheIdentity) {
  const Workload w = generate("trilinear_brain", {{"dim", {40, 44, 36}}, {"floating_dim", {80, 44, 18}}, {"mask", "full"},
                                                  {"padding", 2.5}},
                              4);
  EXPECT_EQ(w.variables.at("floatingVoxelNumber"), 80 * 44 * 18);
  EXPECT_EQ(w.variables.at("paddingValue"), 2.5);
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "field");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  ASSERT_EQ(field.size(), active.size());
  ASSERT_EQ(active.size(), 40u * 44u * 36u);
  // Voxel (x, y, z) lands near ((x + 0.5) * 2 - 0.5, y, (z + 0.5) / 2 - 0.5) in the floating image:
  // within the displacement amplitude (3), the misalignment (2 + rotation) and the scale.
  double largest = 0;
  std::size_t outside = 0;
  for (std::size_t t = 0; t < active.size(); ++t) {
    const int i = active[t], x = i % 40, y = (i / 40) % 44, z = i / (40 * 44);
    largest = std::max(largest, std::fabs(field[t].x - ((x + 0.5) * 2 - 0.5)) / 2);
    largest = std::max(largest, std::fabs(double{field[t].y} - y));
    largest = std::max(largest, std::fabs(field[t].z - ((z + 0.5) / 2 - 0.5)) * 2);
    outside += field[t].x < 0 || field[t].x > 79 || field[t].y < 0 || field[t].y > 43 || field[t].z < 0 ||
               field[t].z > 17;
  }
  EXPECT_GT(largest, 0.5);
  EXPECT_LT(largest, 8.0);
  EXPECT_GT(outside, 0u);  // a full mask near the border exercises the padding
}

// --------------------------------------------------------------- convolution

Workload convolution_workload(Dim3 dims, const std::vector<Float4>& field, const std::vector<float>& weights) {
  Workload w;
  const int radius = static_cast<int>(weights.size() / 2);
  w.variables = {{"imageDimX", dims.x}, {"imageDimY", dims.y}, {"imageDimZ", dims.z},
                 {"voxelNumber", static_cast<double>(dims.voxels())}, {"kernelRadius", radius},
                 {"kernelSize", 2 * radius + 1}};
  w.inputs["input"] = to_bytes(field);
  w.inputs["kernelWeights"] = to_bytes(weights);
  return w;
}

std::vector<float> normalised_gaussian(int radius, double sigma) {
  std::vector<float> w;
  double sum = 0;
  for (int i = -radius; i <= radius; ++i) sum += std::exp(-0.5 * i * i / (sigma * sigma));
  for (int i = -radius; i <= radius; ++i) w.push_back(static_cast<float>(std::exp(-0.5 * i * i / (sigma * sigma)) / sum));
  return w;
}

TEST(ConvolutionReference, ConstantFieldStaysConstantEvenAtTheBorders) {
  for (const Dim3 dims : {Dim3{9, 4, 3}, Dim3{1, 5, 2}, Dim3{4, 3, 2}}) {
    for (const int radius : {0, 3, 7}) {
      const std::vector<Float4> field(dims.voxels(), Float4{1.5f, -2.0f, 3.25f, 500.0f});
      const auto out = find_reference("convolution_x")(
                           convolution_workload(dims, field, normalised_gaussian(radius, 1.0 + radius / 3.0)))
                           .at("output");
      ASSERT_EQ(out.size(), 4 * dims.voxels());
      for (std::size_t t = 0; t < dims.voxels(); ++t) {
        ASSERT_NEAR(out[4 * t + 0], 1.5, 1e-12);
        ASSERT_NEAR(out[4 * t + 1], -2.0, 1e-12);
        ASSERT_NEAR(out[4 * t + 2], 3.25, 1e-12);
        ASSERT_EQ(out[4 * t + 3], 0.0);  // input w is never read
      }
    }
  }
}

TEST(ConvolutionReference, SymmetricKernelKeepsARampInTheInterior) {
  const Dim3 dims{16, 2, 2};
  std::vector<Float4> field(dims.voxels());
  for (std::size_t t = 0; t < field.size(); ++t) {
    const float x = static_cast<float>(t % 16);
    field[t] = Float4{x, 2 * x, -x, 0};
  }
  const auto weights = normalised_gaussian(3, 1.2);
  const auto out = find_reference("convolution_x")(convolution_workload(dims, field, weights)).at("output");
  for (std::size_t t = 0; t < field.size(); ++t) {
    const int x = static_cast<int>(t % 16);
    if (x < 3 || x > 12) continue;
    ASSERT_NEAR(out[4 * t + 0], x, 1e-6);
    ASSERT_NEAR(out[4 * t + 1], 2 * x, 1e-6);
    ASSERT_NEAR(out[4 * t + 2], -x, 1e-6);
  }
  // At the border the truncated kernel leans inwards: the first voxel moves up.
  EXPECT_GT(out[0], 0.1);
}

TEST(ConvolutionGenerator, NormalisedGaussianAndJunkInW) {
  const Workload w = generate("convolution_field", {{"dim", {20, 10, 6}}, {"radius", 3}}, 8);
  const auto weights = from_bytes<float>(w.inputs.at("kernelWeights"), "weights");
  ASSERT_EQ(weights.size(), 7u);
  double sum = 0;
  for (float v : weights) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_EQ(weights[0], weights[6]);
  EXPECT_GT(weights[3], weights[2]);
  const auto field = from_bytes<Float4>(w.inputs.at("input"), "input");
  double junk = 0, length = 0;
  for (const Float4& v : field) {
    junk = std::max(junk, static_cast<double>(std::fabs(v.w)));
    length += std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  }
  EXPECT_GT(junk, 100.0);  // a variant that uses w gets it wrong
  length /= static_cast<double>(field.size());
  EXPECT_GT(length, 0.1);
  EXPECT_LT(length, 10.0);
}

// ------------------------------------------------------------- the workloads

TEST(Workloads, BrainMaskOf217CubedHasAbout2MillionVoxels) {
  const auto start = std::chrono::steady_clock::now();
  const auto active = gi::seeds::active_voxels(Dim3{217, 217, 217}, gi::seeds::MaskShape::Brain, 1);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ info ] brain mask 217^3 (seed 1): " << active.size() << " active voxels in " << seconds << " s\n";
  EXPECT_GE(active.size(), 1800000u);
  EXPECT_LE(active.size(), 2400000u);
  EXPECT_TRUE(std::is_sorted(active.begin(), active.end()));
  EXPECT_EQ(std::adjacent_find(active.begin(), active.end()), active.end());
  EXPECT_GE(active.front(), 0);
  EXPECT_LT(active.back(), 217 * 217 * 217);
  // A brain, not a box: the corners are empty, the centre is not.
  EXPECT_FALSE(std::binary_search(active.begin(), active.end(), 0));
  EXPECT_TRUE(std::binary_search(active.begin(), active.end(), (108 * 217 + 108) * 217 + 130));
}

TEST(Workloads, EveryMaskShapeIsUsable) {
  const Dim3 dims{41, 37, 33};
  for (const std::string& name : gi::seeds::mask_shape_names()) {
    SCOPED_TRACE(name);
    const auto active = gi::seeds::active_voxels(dims, gi::seeds::mask_shape_from_name(name), 2);
    EXPECT_GT(active.size(), 100u);
    EXPECT_LE(active.size(), dims.voxels());
    EXPECT_TRUE(std::is_sorted(active.begin(), active.end()));
  }
  EXPECT_EQ(gi::seeds::active_voxels(dims, gi::seeds::MaskShape::Full, 2).size(), dims.voxels());
  EXPECT_THROW(gi::seeds::mask_shape_from_name("torus"), std::runtime_error);
}

TEST(Workloads, TissueImageHasDistinctTissues) {
  const Dim3 dims{64, 64, 64};
  const auto image = gi::seeds::tissue_image(dims, 3);
  // The centre column crosses white matter (~118), the corner is air (~0).
  EXPECT_LT(image[dims.index(1, 1, 1)], 10.0f);
  int bright = 0, dark = 0, mid = 0;
  for (float v : image) {
    bright += v > 100 ? 1 : 0;
    mid += v > 60 && v < 90 ? 1 : 0;
    dark += v < 10 ? 1 : 0;
  }
  EXPECT_GT(bright, 10000);
  EXPECT_GT(mid, 5000);
  EXPECT_GT(dark, 10000);
}

// At least 5 held-out workloads with at least 16 M checked values per kernel
// (the fitness protocol's floor). Generation only: no reference needed.
TEST(Workloads, ValidationWorkloadsCheckAtLeast16MillionValues) {
  for (const char* dir : {"bspline/deformation_field", "resampling/trilinear", "tools/convolution_x"}) {
    const KernelSpec spec = spec_of(dir);
    std::size_t total = 0;
    std::string sizes;
    for (std::size_t v = 0; v < spec.validate.size(); ++v) {
      Workload w = generate_workload(spec, spec.validate[v], spec.validate[v].seed);
      std::size_t values = 0;
      for (const ParamSpec& p : spec.parameters) {
        if (p.role != ParamRole::Out && p.role != ParamRole::InOut) continue;
        const auto elements = p.written_all ? static_cast<std::size_t>(p.count.evaluate(w.variables))
                                            : w.inputs.at(p.written_indices).size() / 4;
        values += elements * p.checked_components.size();
      }
      sizes += " " + std::to_string(values);
      total += values;
    }
    std::cout << "[ info ] " << spec.entry << ": " << spec.validate.size() << " validation workloads, " << total
              << " checked values (" << sizes << " )\n";
    EXPECT_GE(spec.validate.size(), 5u);
    EXPECT_GE(total, 16000000u) << spec.entry;
  }
}

TEST(Workloads, GenerationIsDeterministicPerSeedAndDiffersAcrossSeeds) {
  const std::vector<std::pair<const char*, json>> cases = {
      {"bspline_brain", {{"dim", {30, 34, 28}}}},
      {"trilinear_brain", {{"dim", {30, 34, 28}}, {"floating_dim", 25}}},
      {"convolution_field", {{"dim", {30, 34, 28}}}},
  };
  for (const auto& [generator, variables] : cases) {
    SCOPED_TRACE(generator);
    const Workload a = generate(generator, variables, 11), b = generate(generator, variables, 11),
                   c = generate(generator, variables, 12);
    EXPECT_EQ(a.variables, b.variables);
    EXPECT_EQ(a.inputs, b.inputs);
    ASSERT_EQ(a.inputs.size(), c.inputs.size());
    std::size_t differing = 0;
    for (const auto& [name, bytes] : a.inputs) differing += bytes != c.inputs.at(name) ? 1 : 0;
    // Every random input changes with the seed (the kernel weights are not random).
    EXPECT_GE(differing, a.inputs.size() - (std::string(generator) == "convolution_field" ? 1 : 0));
  }
}

// ---------------------------------------------- float emulation vs tolerance

struct SmallCase {
  const char* dir;
  json variables;
};

// The kernels' own float arithmetic passes the spec's tolerance on small
// workloads of every kind, with and without fused multiply-adds.
TEST(FloatEmulation, SeedArithmeticPassesTheSpecTolerance) {
  const std::vector<SmallCase> cases = {
      {"bspline/deformation_field", {{"dim", {61, 53, 47}}, {"spacing", 5}, {"mask", "brain"}}},
      {"bspline/deformation_field", {{"dim", {47, 40, 33}}, {"spacing", 3.3}, {"amplitude", 8}, {"mask", "full"}}},
      {"resampling/trilinear", {{"dim", {61, 53, 47}}, {"mask", "brain"}}},
      {"resampling/trilinear", {{"dim", {40, 36, 30}}, {"floating_dim", {50, 30, 33}}, {"mask", "full"}, {"padding", -4}}},
      {"tools/convolution_x", {{"dim", {61, 53, 47}}, {"radius", 3}}},
      {"tools/convolution_x", {{"dim", {7, 40, 30}}, {"radius", 9}, {"sigma", 4}, {"amplitude", 30}}},
  };
  for (const SmallCase& c : cases) {
    SCOPED_TRACE(c.variables.dump());
    const KernelSpec spec = spec_of(c.dir);
    WorkloadSpec ws = spec.train;
    ws.variables = c.variables;
    for (const std::uint64_t seed : {21u, 22u}) {
      const Workload w = generate_workload(spec, ws, seed);
      const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
      ASSERT_EQ(expected.size(), 1u);
      for (const bool fma : {false, true}) {
        const ErrorStats s =
            compare(emulate(spec.entry, w, fma), expected[0], components_of(spec, expected[0].buffer), spec.tolerance);
        EXPECT_EQ(s.failures, 0u) << spec.entry << (fma ? " (fma)" : "") << ": " << s.first_failure;
        EXPECT_GT(s.values, 1000u);
      }
    }
  }
}

// The train_checks of these three seeds (the others are in their families'
// tests): the seed's float arithmetic passes each with its own tolerance.
TEST(FloatEmulation, SeedArithmeticPassesEveryTrainingCheck) {
  std::size_t checks = 0;
  for (const char* dir : {"bspline/deformation_field", "resampling/trilinear", "tools/convolution_x"}) {
    const KernelSpec spec = spec_of(dir);
    for (const WorkloadSpec& ws : spec.train_checks) {
      SCOPED_TRACE(std::string(dir) + " " + ws.json_path);
      ++checks;
      for (const std::uint64_t seed : {3u, 4u}) {
        const Workload w = generate_workload(spec, ws, seed);
        const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
        ASSERT_EQ(expected.size(), 1u);
        for (const bool fma : {false, true}) {
          const ErrorStats s = compare(emulate(spec.entry, w, fma), expected[0],
                                       components_of(spec, expected[0].buffer), spec.tolerance_of(ws));
          EXPECT_EQ(s.failures, 0u) << (fma ? "fma: " : "") << s.first_failure;
          EXPECT_GT(s.values, 100u);
        }
      }
    }
  }
  EXPECT_GE(checks, 4u);
}

// A tolerance that passes anything would make the test above meaningless:
// the typical bug of each kernel - an input read one element off - must fail
// on most values.
TEST(FloatEmulation, ToleranceCatchesOffByOneReads) {
  struct Case {
    const char* dir;
    json variables;
    const char* input;  // shifted by one element before emulating
    std::size_t element_bytes;
  };
  const std::vector<Case> cases = {
      {"bspline/deformation_field", {{"dim", {30, 26, 22}}, {"mask", "brain"}}, "controlPointGrid", 16},
      {"resampling/trilinear", {{"dim", {30, 26, 22}}, {"mask", "brain"}}, "floatingImage", 4},
      {"tools/convolution_x", {{"dim", {20, 6, 5}}, {"radius", 3}}, "kernelWeights", 4},
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
    const ErrorStats s =
        compare(emulate(spec.entry, w, false), expected[0], components_of(spec, expected[0].buffer), spec.tolerance);
    EXPECT_GT(s.failures, s.values / 2) << s.failures << " of " << s.values;
  }
}

// Not run by default: measures the float-vs-double errors that the specs'
// tolerance notes record, on the training workload (217^3, two seeds) and on
// every held-out workload, and the margin the spec's tolerance leaves.
TEST(FloatEmulation, DISABLED_MeasureTrainingWorkloadErrors) {
  for (const char* dir : {"bspline/deformation_field", "resampling/trilinear", "tools/convolution_x"}) {
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
      for (const bool fma : {false, true}) {
        const ErrorStats s =
            compare(emulate(spec.entry, w, fma), expected[0], components_of(spec, expected[0].buffer), spec.tolerance);
        std::cout << "[ info ] " << spec.entry << " " << which << " seed " << generator_seed
                  << (fma ? " fma   " : " no-fma") << ": " << s.values << " values, max abs " << s.max_abs
                  << ", max rel " << s.max_rel << ", largest |ref| " << s.largest_reference << ", margin "
                  << 1.0 / s.worst_fraction << "\n";
        EXPECT_EQ(s.failures, 0u) << s.first_failure;
      }
      std::cout << "[ info ]   generate " << std::chrono::duration<double>(t1 - t0).count() << " s, reference "
                << std::chrono::duration<double>(t2 - t1).count() << " s\n";
    }
  }
}

// ------------------------------------------------------------- the registry

gi::fitness::Workload dummy_generator(const json&, std::uint64_t) { return {}; }

TEST(Registry, UnknownNamesAreNamedWithTheKnownOnes) {
  try {
    find_generator("no_such_generator");
    FAIL();
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown generator 'no_such_generator'"), std::string::npos) << m;
    EXPECT_NE(m.find("bspline_brain"), std::string::npos) << m;
  }
  try {
    find_reference("no_such_kernel");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown reference 'no_such_kernel'"), std::string::npos) << e.what();
  }
}

TEST(Registry, EverySeedRegisteredItsGeneratorAndReference) {
  for (const char* g : {"bspline_brain", "trilinear_brain", "convolution_field"}) EXPECT_TRUE(has_generator(g)) << g;
  for (const char* r : {"bspline_deformation_field", "trilinear_resample", "convolution_x"})
    EXPECT_TRUE(has_reference(r)) << r;
}

TEST(Registry, RegisteringANameTwiceMakesItsLookupFail) {
  register_generator("test_registered_twice", dummy_generator);
  EXPECT_NO_THROW(find_generator("test_registered_twice"));
  register_generator("test_registered_twice", dummy_generator);
  try {
    find_generator("test_registered_twice");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("registered more than once"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------ reference cache

class ReferenceCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gi-refcache-" + std::to_string(std::random_device{}()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

bool bitwise_equal(const ReferenceOutputs& a, const ReferenceOutputs& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, values] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.size() != values.size()) return false;
    if (!values.empty() && std::memcmp(values.data(), it->second.data(), values.size() * sizeof(double)) != 0)
      return false;
  }
  return true;
}

TEST_F(ReferenceCacheTest, KeyDependsOnEveryPart) {
  const json v = {{"dim", 10}};
  const std::string k = ReferenceCache::key("e", "g", v, 1);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, ReferenceCache::key("e", "g", json::parse("{\"dim\": 10}"), 1));
  EXPECT_NE(k, ReferenceCache::key("f", "g", v, 1));
  EXPECT_NE(k, ReferenceCache::key("e", "h", v, 1));
  EXPECT_NE(k, ReferenceCache::key("e", "g", {{"dim", 11}}, 1));
  EXPECT_NE(k, ReferenceCache::key("e", "g", v, 2));
  EXPECT_NE(k, ReferenceCache::key("e", "g", v, 1, 99));
}

TEST(WorkloadDigest, ChangesWithAnyInputByteOrVariable) {
  Workload w = generate("convolution_field", {{"dim", {9, 7, 5}}}, 1);
  const std::uint64_t d = workload_digest(w);
  EXPECT_EQ(d, workload_digest(generate("convolution_field", {{"dim", {9, 7, 5}}}, 1)));
  Workload changed = w;
  changed.inputs["input"][17] ^= std::byte{1};
  EXPECT_NE(workload_digest(changed), d);
  changed = w;
  changed.inputs["kernelWeights"].pop_back();  // a size that is no multiple of 8
  EXPECT_NE(workload_digest(changed), d);
  changed = w;
  changed.variables["kernelRadius"] = 4;
  EXPECT_NE(workload_digest(changed), d);
}

TEST_F(ReferenceCacheTest, HitReturnsIdenticalValues) {
  const ReferenceCache cache(dir_);
  const ReferenceOutputs out = {
      {"a", {1.0, -0.0, std::numeric_limits<double>::quiet_NaN(), 1e-300, 3.25}},
      {"b", {}},
      {"odd_name_length", {7.0}},
  };
  const std::string key = ReferenceCache::key("e", "g", json::object(), 1);
  EXPECT_FALSE(cache.load(key).has_value());
  ASSERT_TRUE(cache.store(key, out));
  const auto back = cache.load(key);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(bitwise_equal(out, *back));
  // No temporary files are left behind.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
}

TEST_F(ReferenceCacheTest, CorruptOrForeignFilesAreMisses) {
  const ReferenceCache cache(dir_);
  ReferenceOutputs out = {{"v", std::vector<double>(1000, 2.5)}};
  const std::string key = ReferenceCache::key("e", "g", json::object(), 1);
  ASSERT_TRUE(cache.store(key, out));
  const fs::path file = cache.file_for(key);
  const auto size = fs::file_size(file);
  {  // one flipped byte in the values
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x55');
  }
  EXPECT_FALSE(cache.load(key).has_value());
  ASSERT_TRUE(cache.store(key, out));
  fs::resize_file(file, size - 3);  // truncated
  EXPECT_FALSE(cache.load(key).has_value());
  ASSERT_TRUE(cache.store(key, out));
  fs::resize_file(file, size + 8);  // trailing bytes
  EXPECT_FALSE(cache.load(key).has_value());
  // A whole file stored under another key.
  const std::string other = ReferenceCache::key("e", "g", json::object(), 2);
  ASSERT_TRUE(cache.store(key, out));
  fs::copy_file(file, cache.file_for(other));
  EXPECT_FALSE(cache.load(other).has_value());
  std::ofstream(file, std::ios::trunc) << "garbage";
  EXPECT_FALSE(cache.load(key).has_value());
}

TEST_F(ReferenceCacheTest, GetOrComputeComputesOnce) {
  const ReferenceCache cache(dir_);
  int calls = 0;
  const auto compute = [&] {
    ++calls;
    return ReferenceOutputs{{"x", {1, 2, 3}}};
  };
  bool hit = true;
  const auto a = cache.get_or_compute("k1", compute, &hit);
  EXPECT_FALSE(hit);
  const auto b = cache.get_or_compute("k1", compute, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(bitwise_equal(a, b));
}

TEST_F(ReferenceCacheTest, PreparedWorkloadFromTheCacheIsIdentical) {
  json j = json::parse(std::ifstream(kSeeds / "resampling/trilinear/spec.json"));
  j["workloads"]["train"]["variables"] = {{"dim", {33, 30, 27}}, {"floating_dim", 30}, {"mask", "brain"}};
  std::ifstream kernel_file(kSeeds / "resampling/trilinear/kernel.cu");
  const std::string kernel((std::istreambuf_iterator<char>(kernel_file)), std::istreambuf_iterator<char>());
  const KernelSpec spec = parse_kernel_spec(j, "spec.json", kernel, "kernel.cu");
  const PreparedWorkload first = prepare_workload(spec, "train", 5, dir_);
  const PreparedWorkload second = prepare_workload(spec, "train", 5, dir_);
  const PreparedWorkload uncached = prepare_workload(spec, "train", 5);
  EXPECT_FALSE(first.reference_cache_hit);
  EXPECT_TRUE(second.reference_cache_hit);
  EXPECT_FALSE(uncached.reference_cache_hit);
  ASSERT_EQ(first.expected.size(), 1u);
  for (const PreparedWorkload* p : {&second, &uncached}) {
    ASSERT_EQ(p->expected.size(), 1u);
    EXPECT_TRUE(bitwise_equal({{"w", first.expected[0].values}}, {{"w", p->expected[0].values}}));
    EXPECT_EQ(p->expected[0].written_elements, first.expected[0].written_elements);
    EXPECT_EQ(p->plan.buffers[0].initial, first.plan.buffers[0].initial);
  }
  EXPECT_EQ(first.seed, 5u);
  EXPECT_EQ(first.checked_values, first.expected[0].written_elements->size());
  EXPECT_EQ(first.plan.block[0], spec.default_block_size);
  // Another training seed is another workload.
  const PreparedWorkload other = prepare_workload(spec, "train", 6, dir_);
  EXPECT_FALSE(other.reference_cache_hit);
  EXPECT_NE(other.plan.buffers[0].initial, first.plan.buffers[0].initial);
}

TEST(PrepareWorkload, ValidationSeedIsTheSpecsPlusTheCallers) {
  json j = json::parse(std::ifstream(kSeeds / "tools/convolution_x/spec.json"));
  j["workloads"]["validate"][1]["variables"] = {{"dim", {12, 5, 4}}, {"radius", 2}};
  std::ifstream kernel_file(kSeeds / "tools/convolution_x/kernel.cu");
  const std::string kernel((std::istreambuf_iterator<char>(kernel_file)), std::istreambuf_iterator<char>());
  const KernelSpec spec = parse_kernel_spec(j, "spec.json", kernel, "kernel.cu");
  const PreparedWorkload p = prepare_workload(spec, "validate:1", 0, std::nullopt, 256);
  EXPECT_EQ(p.seed, spec.validate[1].seed);
  EXPECT_EQ(prepare_workload(spec, "validate:1", 4).seed, spec.validate[1].seed + 4);
  EXPECT_EQ(p.plan.block[0], 256u);
  EXPECT_EQ(p.plan.grid[0], 1u);
  EXPECT_EQ(p.checked_values, 12u * 5u * 4u * 4u);
  EXPECT_EQ(p.tolerance.abs, spec.tolerance.abs);
  EXPECT_EQ(p.variables.at("kernelRadius"), 2);
}

}  // namespace
