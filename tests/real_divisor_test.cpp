// gi init's reading of a whole coordinate divided by a real size
// (analysis/parameter_use_reals.cpp, Analyser::real_divisor): a B-spline
// kernel finds a voxel's control-point cell as floor(x / spacing), spacing
// a float parameter or __constant__. gi takes the spacing as a positive
// size, so the cell index stays below ceil_div(nx - 1, spacing) + 1 for
// any positive spacing, whole or not; the dynamic shared memory of a
// kernel written for (B, 1, 1) blocks counts blockDim.y and .z as 1.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <map>
#include <string>

#include "fitness/workload/expression.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/init_sizes.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

// One voxel per thread of an nx x ny image; a 4 x 4 neighbourhood of
// control points from the cell (`cell_x`, `cell_y`) over a grid cx wide.
std::string cells(const std::string& declarations, const std::string& params, const std::string& cell_x,
                  const std::string& cell_y) {
  return declarations +
         "__global__ void k(const float4* cp, float* out, int nx, int ny, int cx" + params + ") {\n"
         "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < nx * ny) {\n"
         "    const int y = i / nx;\n"
         "    const int x = i - y * nx;\n"
         "    const int px = " + cell_x + ";\n"
         "    const int py = " + cell_y + ";\n"
         "    float s = 0.f;\n"
         "    for (int b = 0; b < 4; ++b)\n"
         "      for (int a = 0; a < 4; ++a) s += cp[(py + b) * cx + px + a].x;\n"
         "    out[i] = s;\n"
         "  }\n"
         "}\n";
}

// The largest index the kernel reads, brute force, and the count gi wrote,
// evaluated: the count must cover the index, and by no more than a row
// and a column of the grid (the rounding up of a cell that a whole
// spacing divides exactly is none).
void expect_covers(const std::string& count_text, int nx, int ny, int cx, double sx, double sy) {
  long long most = -1;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      const long long px = static_cast<long long>(std::floor(static_cast<float>(x) / static_cast<float>(sx)));
      const long long py = static_cast<long long>(std::floor(static_cast<float>(y) / static_cast<float>(sy)));
      most = std::max(most, (py + 3) * cx + px + 3);
    }
  const fitness::Variables v = {{"nx", nx}, {"ny", ny}, {"cx", cx}, {"spacing_x", sx},
                                           {"spacing_y", sy}, {"sx", sx}, {"sy", sy},
                                           {"c_Spacing_x", sx}, {"c_Spacing_y", sy}};
  const double counted = fitness::evaluate_expression(count_text, v);
  EXPECT_GE(counted, static_cast<double>(most + 1)) << count_text << " at spacing " << sx << ", " << sy;
  EXPECT_LE(counted, static_cast<double>(most + 1 + cx + 1)) << count_text << " at spacing " << sx << ", " << sy;
}

TEST(RealDivisor, AFloatSpacingBoundsTheControlPointCell) {
  // A float3 parameter's components, floorf then a cast.
  const auto vector = use_of(cells("", ", float3 spacing", "(int)floorf((float)x / spacing.x)",
                                    "(int)floorf((float)y / spacing.y)"));
  const std::string c = count(vector, "cp");
  ASSERT_EQ(c.find("none"), std::string::npos) << c;
  EXPECT_NE(c.find("spacing_x"), std::string::npos) << c;
  expect_covers(c, 512, 300, 131, 4, 4);
  expect_covers(c, 97, 61, 40, 2.5, 5);  // a spacing that is no whole number
  // Two float scalars, NiftyReg's Floor<int> (its Maths.hpp rounds down).
  const auto scalars = use_of(cells("", ", float sx, float sy", "Floor<int>((float)x / sx)", "Floor<int>((float)y / sy)"));
  expect_covers(count(scalars, "cp"), 200, 50, 60, 5, 3);
}

TEST(RealDivisor, AConstantSpacingThroughALocalCopyOfItsComponents) {
  // The kernel copies the components into a float2 first.
  const std::string source =
      "__constant__ float3 c_Spacing;\n"
      "__global__ void k(const float4* cp, float* out, int nx, int ny, int cx) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < nx * ny) {\n"
      "    const int y = i / nx;\n"
      "    const int x = i - y * nx;\n"
      "    const float2 g = { c_Spacing.x, c_Spacing.y };\n"
      "    const int2 ante = { (int)floorf((float)x / g.x), (int)floorf((float)y / g.y) };\n"
      "    float s = 0.f;\n"
      "    for (int b = 0; b < 4; ++b) {\n"
      "      int index = (ante.y + b) * cx + ante.x;\n"
      "      s += cp[index++].x;\n"
      "      s += cp[index++].x;\n"
      "      s += cp[index++].x;\n"
      "      s += cp[index].x;\n"
      "    }\n"
      "    out[i] = s;\n"
      "  }\n"
      "}\n";
  const std::string c = count(use_of(source), "cp");
  EXPECT_NE(c.find("c_Spacing_y"), std::string::npos) << c;
  expect_covers(c, 128, 77, 35, 4, 4);
}

// The draft's workloads: the small check keeps the spacing the user gave
// (an odd spacing as large as its small image would put every voxel in one
// cell); the held-out workloads vary it with the image, whole and positive.
TEST(RealDivisor, TheSmallCheckKeepsTheSpacingAndTheHeldOutVaryIt) {
  const std::string source = cells("", ", float3 spacing", "(int)floorf((float)x / spacing.x)",
                                   "(int)floorf((float)y / spacing.y)");
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"nx=512", "ny=512", "cx=131", "spacing=4,4,1"}, {}));
  const nlohmann::json spec = nlohmann::json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << s.spec.dump(2);
  const nlohmann::json& small = spec["workloads"]["train_checks"][0]["variables"];
  EXPECT_EQ(small["spacing_x"], 4);
  EXPECT_EQ(small["spacing_y"], 4);
  EXPECT_LT(small["nx"].get<double>(), 64.0);  // a small image, several cells of it
  std::set<double> spacings;
  for (const auto& w : spec["workloads"]["validate"]) {
    const double v = w["variables"]["spacing_x"].get<double>();
    EXPECT_GE(v, 1.0);
    EXPECT_EQ(v, std::floor(v));
    spacings.insert(v);
  }
  EXPECT_GT(spacings.size(), 1u);
}

// What gi cannot take for a positive size stays refused: a spacing the
// kernel changes, a loaded value, a float the kernel computes from one.
// `params` are the kernel's beyond the buffers, `before` a statement ahead
// of the read of cp at floor(i / divisor).
std::string refusal(const std::string& params, const std::string& before, const std::string& divisor) {
  return count(use_of("__global__ void k(const float4* cp, const float* w, float* out, int n" + params + ") {\n"
                      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + before +
                      "  if (i < n) out[i] = cp[(int)floorf((float)i / " + divisor + ")].x;\n"
                      "}\n"),
               "cp");
}

TEST(RealDivisor, ADivisorGiCannotTakeForASizeIsRefused) {
  EXPECT_EQ(refusal(", float s", "", "s"), "ceil_div(n - 1, s) + 1");  // the rule itself, for contrast
  for (const std::string& c : {refusal(", float s", "  s = s * 0.5f;\n", "s"), refusal("", "", "w[i]"),
                               refusal(", float s", "", "(s - 1.0f)")})
    EXPECT_EQ(c.rfind("none", 0), 0u) << c;
}

// NiftyReg's Jacobian kernels keep four values per thread in dynamic shared
// memory and a second array after them, at `4 * blockDim.x * blockDim.y *
// blockDim.z`: with the (B, 1, 1) blocks gi launches, 8 floats per thread.
// A kernel that reads threadIdx.y is written for other blocks: refused.
TEST(RealDivisor, SharedMemoryAfterAPerThreadArrayCountsTheBlockAsOneAxis) {
  const std::string one_axis =
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  extern __shared__ float first[];\n"
      "  float* second = &first[4 * blockDim.x * blockDim.y * blockDim.z];\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    const unsigned t = 4 * threadIdx.x;\n"
      "    for (int a = 0; a < 4; ++a) { first[t + a] = in[i]; second[t + a] = 2.f * in[i]; }\n"
      "    out[i] = first[t] + second[t + 3];\n"
      "  }\n"
      "}\n";
  const auto u = use_of(one_axis);
  ASSERT_TRUE(u.dynamic_shared);
  ASSERT_TRUE(u.dynamic_shared->use.count) << u.dynamic_shared->use.refusal;
  EXPECT_EQ(u.dynamic_shared->use.count->text(), "8 * B");
  std::string two_axes = one_axis;
  two_axes.replace(two_axes.find("4 * threadIdx.x"), 15, "4 * (threadIdx.x + threadIdx.y)");
  const auto v = use_of(two_axes);
  ASSERT_TRUE(v.dynamic_shared);
  EXPECT_FALSE(v.dynamic_shared->use.count) << v.dynamic_shared->use.count->text();
}

}  // namespace
}  // namespace gi
