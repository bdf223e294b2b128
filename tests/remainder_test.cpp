// The remainder idiom (analysis/parameter_use_remainder.cpp): `a - b * (a
// / b)` is a % b, in [0, b - 1], where the quotient divides the same
// dividend by the same sizes; NiftyReg splits flat indices into
// coordinates so (getJacobianMatrix3D, smoothJointHistogramY).
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

TEST(Remainder, AnUpdateAndAnExpressionSplitAFlatIndex) {
  // getJacobianMatrix3D's shape: t -= z * nx * ny, then x = t - y * nx.
  const auto u = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int ny, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int t = tid;\n"
      "    const int z = t / (nx * ny);\n"
      "    t -= z * nx * ny;\n"
      "    const int y = t / nx;\n"
      "    const int x = t - y * nx;\n"
      "    out[tid] = in[x] + in[nx + y];\n"
      "  }\n"
      "}\n");
  // x < nx, y < ny: in reaches nx + ny - 1.
  EXPECT_EQ(test::count(u, "in"), "nx + ny");
}

TEST(Remainder, AQuotientOfAQuotientThroughCasts) {
  // smoothJointHistogramY's shape: (tid / a) % r written with casts.
  const auto u = test::use_of(
      "__global__ void k(float* out, int a, int r, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) out[(int)(tid / a - r * (int)(tid / (a * r)))] = 1.f;\n"
      "}\n");
  EXPECT_EQ(test::count(u, "out"), "r");
}

TEST(Remainder, NotWhereTheDividendChangesOrTheDivisorsDiffer) {
  // t changes between the quotient and the subtraction: no longer one value.
  const auto changed = test::use_of(
      "__global__ void k(float* out, int nx, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int t = tid;\n"
      "    const int y = t / nx;\n"
      "    t += 1;\n"
      "    out[t - y * nx] = 1.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(changed, "out").rfind("none: ", 0), 0u) << test::count(changed, "out");
  // t / nx times ny: not a remainder.
  const auto other = test::use_of(
      "__global__ void k(float* out, int nx, int ny, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    const int y = tid / nx;\n"
      "    out[tid - y * ny] = 1.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(other, "out").rfind("none: ", 0), 0u) << test::count(other, "out");
}

}  // namespace
}  // namespace gi
