// Loops gi's elements do not see (analysis/parameter_use_counted_loop.cpp):
// a loop inside a lambda's body bounds its counter; a counter several loops
// share is bounded by the loop around the read, a limit that differs per
// thread by its largest value.
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

// Written for this test: a 3x3 product inside a lambda, as NiftyReg's
// AssembleRigid builds its rotation.
constexpr const char* kLambdaLoop = R"(
__global__ void rotate(const double* U, const double* V, double* R) {
  double s[9];
  auto product = [&]() {
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        double t = 0;
        for (int k = 0; k < 3; ++k) t += V[k * 3 + a] * U[k * 3 + b];
        s[a * 3 + b] = t;
      }
  };
  product();
  for (int i = 0; i < 9; ++i) R[i] = s[i];
}
)";

// Written for this test: per-block sums where the last block adds the
// items past its power of two, as Rodinia's srad reduction does.
constexpr const char* kSharedCounter = R"(
#define NT 512
__global__ void partial(int items, float* sums) {
  int bx = blockIdx.x;
  int tx = threadIdx.x;
  int ei = bx * NT + tx;
  int last = NT - (gridDim.x * NT - items);
  int even = 0;
  int i;
  for (i = 2; i <= NT; i = 2 * i)
    if (last >= i) even = i;
  float s = 0;
  if (ei < items) s = sums[ei];
  if (tx == 0)
    for (i = bx * NT + even; i < bx * NT + last; i++) s += sums[i];
  if (ei < items) sums[ei] = s;
}
)";

TEST(CountedLoopRange, ALoopInALambdaBoundsItsCounters) {
  const analysis::ParameterUse u = use_of(kLambdaLoop);
  EXPECT_EQ(count(u, "U"), "9");
  EXPECT_EQ(count(u, "V"), "9");
}

TEST(CountedLoopRange, ASharedCounterTakesTheLoopAroundTheRead) {
  // i < bx * NT + last, with bx below the grid and last the items of the
  // last block: at most items - 1, as ei's guard says.
  EXPECT_EQ(count(use_of(kSharedCounter), "sums"), "items");
}

TEST(CountedLoopRange, AStepThatDoublesIsReadAsTheOtherForms) {
  std::string doubled = kSharedCounter;
  const std::string step = "i = 2 * i";
  doubled.replace(doubled.find(step), step.size(), "i *= 2");
  EXPECT_EQ(count(use_of(doubled), "sums"), "items");
  doubled.replace(doubled.find("i *= 2"), 6, "i <<= 1");
  EXPECT_EQ(count(use_of(doubled), "sums"), "items");
}

TEST(CountedLoopRange, TheBodyAssigningTheCounterRefuses) {
  std::string stepped = kLambdaLoop;
  const std::string read = "t += V[k * 3 + a] * U[k * 3 + b];";
  stepped.replace(stepped.find(read), read.size(), "{ " + read + " k += 2; }");
  EXPECT_EQ(count(use_of(stepped), "U").rfind("none: ", 0), 0u);
}

TEST(CountedLoopRange, TheBodyAssigningTheLimitRefuses) {
  std::string moved = kSharedCounter;
  const std::string read = "s += sums[i];";
  moved.replace(moved.find(read), read.size(), "{ " + read + " last += 1; }");
  EXPECT_EQ(count(use_of(moved), "sums").rfind("none: ", 0), 0u);
}

}  // namespace
}  // namespace gi
