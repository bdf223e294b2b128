// A loop's counter stepped by a size (`i += increment`, NiftyReg's
// smoothJointHistogramZ) grows: under a guard whose limit differs per
// thread it reaches that limit's largest value (Analyser::steps_grow), as
// a counter stepped by a number does. A step that may be negative is no
// growth, and says so.
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

TEST(SizedStep, ACounterSteppedByASizeReachesItsPerThreadLimit) {
  const auto u = test::use_of(
      "__global__ void k(float* out, int bins, int planes, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    const int increment = n;\n"
      "    const int finish = tid + increment * planes;\n"
      "    for (int i = tid; i < finish; i += increment) out[i] = 1.f;\n"
      "  }\n"
      "}\n");
  // finish < n + n * planes: the count is its largest value.
  EXPECT_EQ(test::count(u, "out"), "n * planes + n - 1");
}

TEST(SizedStep, AStepThatMayBeNegativeIsNoGrowth) {
  const auto u = test::use_of(
      "__global__ void k(float* out, int planes, int n, int m) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    const int step = m - n;\n"
      "    const int finish = tid + n * planes;\n"
      "    for (int i = tid; i < finish; i += step) out[i] = 1.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(u, "out"), "none: line 6: the index 'i': 'i' steps by 'step', which may be negative");
}

}  // namespace
}  // namespace gi
