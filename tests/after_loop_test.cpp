// A local a for loop before the read steps once per pass
// (StraightLineUpdate::after_loop): its value after the loop is its value
// before plus the step times the passes, from 0 to max(0, e - s). Rodinia's
// hotspot3D marches each thread up the z planes so (`c += xy` per pass of
// `k < nz - 1`, then reads the top plane at c).
#include <gtest/gtest.h>

#include "analysis/symbolic_size.hpp"
#include "parameter_use_support.hpp"

namespace gi {
namespace {

TEST(AfterLoop, AMarchReadAfterItsLoopReachesTheLastPlane) {
  const auto u = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int ny, int nz) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < nx * ny) {\n"
      "    int c = i;\n"
      "    const int xy = nx * ny;\n"
      "    float sum = in[c];\n"
      "    for (int k = 1; k < nz; ++k) {\n"
      "      c += xy;\n"
      "      sum += in[c];\n"
      "    }\n"
      "    out[c] = sum;\n"
      "  }\n"
      "}\n");
  // nz - 1 passes at most: c reaches (nz - 1) * nx * ny + nx * ny - 1.
  EXPECT_EQ(test::count(u, "out"), "nx * ny * nz");
  EXPECT_EQ(test::count(u, "in"), "nx * ny * nz");
}

TEST(AfterLoop, PassesSizesMayMakeNegativeAreAtLeastNone) {
  // k < nz - 1 from 1: max(0, nz - 2) passes, written max(nz, 2) - 2.
  const auto u = test::use_of(
      "__global__ void k(float* out, int nx, int nz) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < nx) {\n"
      "    int c = i;\n"
      "    for (int k = 1; k < nz - 1; ++k) c += nx;\n"
      "    out[c] = 1.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(u, "out"), "max(nz, 2) * nx - nx");
}

TEST(AfterLoop, NotWhereTheLoopsEndChangesOrTheStepIsConditional) {
  // The bound is assigned in the body: its passes are not counted.
  const auto moving = test::use_of(
      "__global__ void k(float* out, int nx, int nz) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < nx) {\n"
      "    int c = i;\n"
      "    int end = nz;\n"
      "    for (int k = 0; k < end; ++k) { c += nx; end -= 1; }\n"
      "    out[c] = 1.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(moving, "out").rfind("none: ", 0), 0u) << test::count(moving, "out");
  // A step under a condition: no step per pass.
  const auto maybe = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int nz) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < nx) {\n"
      "    int c = i;\n"
      "    for (int k = 0; k < nz; ++k) { if (in[k] > 0.f) c += nx; }\n"
      "    out[c] = 1.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(maybe, "out").rfind("none: ", 0), 0u) << test::count(maybe, "out");
}

TEST(AfterLoop, AMaximumThatOnlyAddsNeedsOneOfItsSidesToBeLarger) {
  // max(nz, 2) * s - nz * s + s >= 0: with nz in the max's place it is s.
  using analysis::SymbolicSize;
  const SymbolicSize s = SymbolicSize::name("s"), nz = SymbolicSize::name("nz");
  const SymbolicSize m = SymbolicSize::max_of(nz, SymbolicSize::constant(2));
  EXPECT_TRUE((m * s - nz * s + s).non_negative_for_sizes());
  // Subtracted, the max needs both: nz - max(nz, 2) is negative at nz = 1.
  EXPECT_FALSE((nz - m).non_negative_for_sizes());
}

}  // namespace
}  // namespace gi
