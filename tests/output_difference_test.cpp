// fitness::max_difference: the run-to-run spread of one output buffer, which
// `gi verify` reports and the seed-as-reference adds to the tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "fitness/check/output_check.hpp"

namespace gi::fitness {
namespace {

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(MaxDifference, FloatsGiveTheLargestComponentDifference) {
  BufferArg b;
  b.type = ElementType::F32x2;
  b.count = 2;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_DOUBLE_EQ(max_difference(b, bytes_of<float>({1, 2, nan, 4}), bytes_of<float>({1, 2.5f, nan, 3.75f})), 0.5);
  EXPECT_EQ(max_difference(b, bytes_of<float>({1, 2, nan, 4}), bytes_of<float>({1, 2, nan, 4})), 0.0);
  EXPECT_TRUE(std::isinf(max_difference(b, bytes_of<float>({1, 2, nan, 4}), bytes_of<float>({1, 2, 0, 4}))));
  EXPECT_TRUE(std::isinf(max_difference(b, bytes_of<float>({1, 2, 3, 4}), bytes_of<float>({1, 2}))));
}

TEST(MaxDifference, IntegersMustRepeatExactly) {
  BufferArg b;
  b.type = ElementType::I32;
  b.count = 3;
  EXPECT_EQ(max_difference(b, bytes_of<int>({1, 2, 3}), bytes_of<int>({1, 2, 3})), 0.0);
  EXPECT_TRUE(std::isinf(max_difference(b, bytes_of<int>({1, 2, 3}), bytes_of<int>({1, 2, 4}))));
}

}  // namespace
}  // namespace gi::fitness
