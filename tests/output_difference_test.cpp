// fitness::max_difference: the run-to-run spread of one output buffer, which
// `gi verify` reports and the seed-as-reference adds to the tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

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

TEST(ExpectedBufferIndices, EachReferenceNamesAnOutputOfThePlan) {
  LaunchPlan plan;
  plan.buffers = {BufferArg{"in", ParamRole::In, ElementType::F32, 4, {}},
                  BufferArg{"out", ParamRole::Out, ElementType::F32, 4, {}},
                  BufferArg{"acc", ParamRole::InOut, ElementType::F32, 1, {}}};
  ExpectedOutput acc, out, in, missing;
  acc.buffer = "acc";
  out.buffer = "out";
  in.buffer = "in";
  missing.buffer = "nowhere";
  EXPECT_EQ(expected_buffer_indices(plan, {acc, out}), (std::vector<std::size_t>{2, 1}));
  try {
    expected_buffer_indices(plan, {out, in});
    FAIL() << "a reference for an input buffer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'in', which is not an output"), std::string::npos) << e.what();
  }
  try {
    expected_buffer_indices(plan, {missing});
    FAIL() << "a reference for a buffer the plan lacks was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'nowhere', which the plan lacks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gi::fitness
