// An index a loop steps in lockstep with a guarded local
// (analysis/parameter_use_partner.cpp): below 0 on its own, but the index
// minus d times the partner keeps its value before the loop, and the guard
// bounds the partner where the index is read. NiftyReg's convolution
// windows along x, y and z walk their images so.
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

TEST(LockstepPartner, AWindowAlongARowIsTheRowsStartPlusTheGuardedColumn) {
  // _reg_ApplyConvolutionWindowAlongX's shape: index = tid - r, x = column - r,
  // both stepped by one; index - x = tid - column = nx * (tid / nx).
  const auto u = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int ny, int n, int window) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int t = tid;\n"
      "    const int z = t / (nx * ny);\n"
      "    t -= z * nx * ny;\n"
      "    const int y = t / nx;\n"
      "    int x = t - y * nx;\n"
      "    const int r = (window - 1) / 2;\n"
      "    int index = tid - r;\n"
      "    x -= r;\n"
      "    float sum = 0.f;\n"
      "    for (int i = 0; i < window; i++) {\n"
      "      if (-1 < x && x < nx) sum += in[index];\n"
      "      index++;\n"
      "      x++;\n"
      "    }\n"
      "    out[tid] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(u, "in"), "ceil_div(n, nx * ny) * nx * ny");
}

TEST(LockstepPartner, AWindowAlongAColumnTakesTheRemainderOfItsStart) {
  // Along z: index steps by a slice, z by one; index - slice * z is tid % slice.
  const auto u = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int ny, int nz, int n, int window) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int z = tid / (nx * ny);\n"
      "    const int r = (window - 1) / 2;\n"
      "    int index = tid - nx * ny * r;\n"
      "    z -= r;\n"
      "    float sum = 0.f;\n"
      "    for (int i = 0; i < window; i++) {\n"
      "      if (-1 < z && z < nz) sum += in[index];\n"
      "      index += nx * ny;\n"
      "      z++;\n"
      "    }\n"
      "    out[tid] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(u, "in"), "nx * ny * nz");
}

TEST(LockstepPartner, NotWhereThePartnerStepsOtherwiseOrIsNotGuarded) {
  // x steps by two while index steps by one: their difference changes.
  const auto twice = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int n, int window) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int x = tid % nx - 1;\n"
      "    int index = tid - 1;\n"
      "    float sum = 0.f;\n"
      "    for (int i = 0; i < window; i++) {\n"
      "      if (-1 < x && x < nx) sum += in[index];\n"
      "      index++;\n"
      "      x += 2;\n"
      "    }\n"
      "    out[tid] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(twice, "in").rfind("none: ", 0), 0u) << test::count(twice, "in");
  // The guard bounds x from above only: its lower end is not known.
  const auto half = test::use_of(
      "__global__ void k(float* out, const float* in, int nx, int n, int window) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int x = tid % nx - 1;\n"
      "    int index = tid - 1;\n"
      "    float sum = 0.f;\n"
      "    for (int i = 0; i < window; i++) {\n"
      "      if (x < nx) sum += in[index];\n"
      "      index++;\n"
      "      x++;\n"
      "    }\n"
      "    out[tid] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(half, "in").rfind("none: ", 0), 0u) << test::count(half, "in");
}

}  // namespace
}  // namespace gi
