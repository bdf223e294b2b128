// gi init's counts where a guard is written on an expression rather than on
// a name (a stencil's `i + d < n`, NiftyReg's `ante.x + a < dim.x`), where
// an index reads a vector local's component (`int2 p = make_int2(...)`),
// and where a clamp is written as an else-if chain (analysis/parameter_use.hpp).
#include <gtest/gtest.h>

#include "tests/parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

// A guard on a sum bounds an index that holds the sum's terms: the index
// itself, or the index with more terms beside them.
TEST(GuardedExpression, AGuardOnASumBoundsAnIndexHoldingItsTerms) {
  const auto stencil = use_of(
      "__global__ void blur(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  float s = 0.f;\n"
      "  for (int d = -2; d <= 2; ++d)\n"
      "    if (i + d >= 0 && i + d < n) s += in[i + d];\n"
      "  out[i] = s;\n"
      "}\n");
  EXPECT_EQ(count(stencil, "in"), "n");
  EXPECT_EQ(count(stencil, "out"), "n");
  // Written the other way round (`0 <= d + i`, `n > i + d`), with a term
  // beside them (a row offset).
  const auto rows = use_of(
      "__global__ void shift(const float* in, float* out, int nx, int ny) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;\n"
      "  if (x >= nx || y >= ny) return;\n"
      "  for (int d = -1; d <= 1; ++d)\n"
      "    if (0 <= x + d && nx > x + d) out[y * nx + x] += in[y * nx + x + d];\n"
      "}\n");
  EXPECT_EQ(count(rows, "in"), "nx * ny");
  // Only an upper guard: the lower end is the sum's own, here negative.
  const auto upper_only = use_of(
      "__global__ void blur(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  for (int d = -2; d <= 2; ++d)\n"
      "    if (i + d < n) out[i] += in[i + d];\n"
      "}\n");
  EXPECT_NE(count(upper_only, "in").find("may be negative"), std::string::npos) << count(upper_only, "in");
}

// A vector local's component is its definition's part: `p.y` of `int2 p =
// make_int2(e0, e1)` or `= {e0, e1}` is e1; the global index through it is
// the work item. A component assigned on its own leaves the local unread.
TEST(GuardedExpression, AVectorLocalsComponentIsItsDefinitionsPart) {
  const auto made = use_of(
      "__global__ void copy2d(const float* in, float* out, int nx, int ny) {\n"
      "  const int2 p = make_int2(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y);\n"
      "  if (p.x < nx && p.y < ny) out[p.y * nx + p.x] = 2.f * in[p.y * nx + p.x];\n"
      "}\n");
  EXPECT_EQ(count(made, "in"), "nx * ny");
  EXPECT_EQ(count(made, "out"), "nx * ny");
  ASSERT_TRUE(made.work.bound[0]);
  EXPECT_EQ(made.work.bound[0]->text(), "nx");
  const auto braced = use_of(
      "__global__ void copy2d(const float* in, float* out, int nx, int ny) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int2 p = {x, (int)blockIdx.y};\n"
      "  if (x < nx && blockIdx.y < ny) out[p.y * nx + p.x] = in[p.x];\n"
      "}\n");
  EXPECT_EQ(count(braced, "out"), "nx * ny");
  EXPECT_EQ(count(braced, "in"), "nx");
  const auto assigned = use_of(
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  int2 p = make_int2(i, 0);\n"
      "  p.x += n;\n"
      "  if (i < n) out[i] = in[p.x];\n"
      "}\n");
  EXPECT_NE(count(assigned, "in").find("not arithmetic"), std::string::npos) << count(assigned, "in");
}

// NiftyReg's composition: the position comes from the field the kernel
// reads, floored into an int2, and each neighbour is read under a guard on
// `ante.x + a` and `ante.y + b`: the guards give the count. Without them the
// index is one computed from loaded data.
TEST(GuardedExpression, AGuardedNeighbourOfALoadedPositionIsCounted) {
  const std::string head =
      "__global__ void sample(const float2* positions, const float* image, float* out, int nx, int ny, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    const float2 q = positions[tid];\n"
      "    const int2 ante = {int(floorf(q.x)), int(floorf(q.y))};\n"
      "    float sum = 0.f;\n"
      "    for (int b = 0; b < 2; ++b)\n"
      "      for (int a = 0; a < 2; ++a) {\n"
      "        const int index = (ante.y + b) * nx + ante.x + a;\n";
  const auto guarded = use_of(head +
                              "        if (-1 < ante.x + a && ante.x + a < nx && -1 < ante.y + b && ante.y + b < ny)\n"
                              "          sum += image[index];\n"
                              "      }\n"
                              "    out[tid] = sum;\n"
                              "  }\n"
                              "}\n");
  EXPECT_EQ(count(guarded, "image"), "nx * ny");
  const auto unguarded = use_of(head +
                                "        sum += image[index];\n"
                                "      }\n"
                                "    out[tid] = sum;\n"
                                "  }\n"
                                "}\n");
  EXPECT_NE(count(unguarded, "image").find("computed from loaded data"), std::string::npos)
      << count(unguarded, "image");
  EXPECT_TRUE(test::pointer(unguarded, "image").index_from_data);
}

// A clamp written as an else-if chain in a helper (NiftyReg's
// GetSlidedValues): the value is 0, w - 1, or the coordinate where both
// tests failed, so below w.
TEST(GuardedExpression, AnElseIfClampBoundsTheValue) {
  const auto u = use_of(
      "__device__ float clamped(const float* image, int x, int y, int nx, int ny) {\n"
      "  int cx = x;\n"
      "  int cy = y;\n"
      "  if (x < 0) {\n"
      "    cx = 0;\n"
      "  } else if (x >= nx) {\n"
      "    cx = nx - 1;\n"
      "  }\n"
      "  if (y < 0) cy = 0;\n"
      "  else if (y >= ny) cy = ny - 1;\n"
      "  return image[cy * nx + cx];\n"
      "}\n"
      "__global__ void shifted(const float* image, const int* dx, float* out, int nx, int ny) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < nx && y < ny) out[y * nx + x] = clamped(image, x + dx[y * nx + x], y - 1, nx, ny);\n"
      "}\n");
  EXPECT_EQ(count(u, "image"), "nx * ny");
  // One link fewer (no lower clamp on y): y - 1 may be -1.
  const auto half = use_of(
      "__global__ void shifted(const float* image, float* out, int nx, int ny) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < nx && y < ny) {\n"
      "    int cy = y - 1;\n"
      "    if (cy > ny) cy = 0;\n"
      "    else if (cy >= ny) cy = ny - 1;\n"
      "    out[y * nx + x] = image[cy * nx + x];\n"
      "  }\n"
      "}\n");
  EXPECT_NE(count(half, "image").find("negative"), std::string::npos) << count(half, "image");
}

}  // namespace
}  // namespace gi
