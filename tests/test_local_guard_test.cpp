// A local that holds a test guards what the test guards (NiftyReg's
// resampling: `bool xInBounds = -1 < X && X < fi_xyz.x;` then
// `(xInBounds && yInBounds) ? img[idx] : padding`), in the kernel and in a
// helper given the kernel's by-value vector whole (analysis/
// parameter_use_guards.cpp, bounds_from; parameter_use_access.cpp,
// follow_into_helper). Where the test's names change after it, it guards
// nothing.
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

// Written for this test: a 2x2 gather at positions read from a buffer.
constexpr const char* kInKernel = R"(
__global__ void gather(const float* img, const float* pos, float* out, uint3 fi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.f;
    for (int b = 0; b < 2; b++) {
      int Y = (int)pos[n + i] + b;
      bool yIn = -1 < Y && Y < fi.y;
      for (int a = 0; a < 2; a++) {
        int X = (int)pos[i] + a;
        bool xIn = -1 < X && X < fi.x;
        const unsigned idx = Y * fi.x + X;
        s += (xIn && yIn) ? img[idx] : 0.f;
      }
    }
    out[i] = s;
  }
}
)";

constexpr const char* kInHelper = R"(
__device__ float taps(const float* img, const int* at, uint3 fi) {
  float s = 0.f;
  for (int b = 0; b < 2; b++) {
    int Y = at[1] + b;
    bool yIn = -1 < Y && Y < fi.y;
    for (int a = 0; a < 2; a++) {
      int X = at[0] + a;
      bool xIn = -1 < X && X < fi.x;
      const unsigned idx = Y * fi.x + X;
      s += (xIn && yIn) ? img[idx] : 0.f;
    }
  }
  return s;
}
__global__ void gather(const float* img, const float* pos, float* out, uint3 fi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int at[2];
    at[0] = (int)pos[i];
    at[1] = (int)pos[n + i];
    out[i] = taps(img, at, fi);
  }
}
)";

TEST(TestLocalGuard, ABoolLocalGuardsTheIndexItTests) {
  EXPECT_EQ(count(use_of(kInKernel), "img"), "fi_x * fi_y");
}

TEST(TestLocalGuard, AHelperGivenTheKernelsVectorUsesItsSizes) {
  EXPECT_EQ(count(use_of(kInHelper), "img"), "fi_x * fi_y");
}

TEST(TestLocalGuard, ATestWhoseNamesChangeAfterwardsGuardsNothing) {
  std::string moved = kInKernel;
  const std::string test = "bool xIn = -1 < X && X < fi.x;";
  moved.replace(moved.find(test), test.size(), test + " X += 4;");
  const analysis::PointerUse& img = test::pointer(use_of(moved), "img");
  EXPECT_FALSE(img.count.has_value());
  EXPECT_FALSE(img.refusal.empty());
}

}  // namespace
}  // namespace gi
