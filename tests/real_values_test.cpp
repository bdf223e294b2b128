// gi init's reading of real values (analysis/parameter_use_reals.cpp): a
// float loaded from memory bounds an index once guards bound it on both
// sides and a conversion makes it whole, through bool helpers (`is_grey`)
// and helpers that bin it (`(int)v >> 2`). Where a float would be taken for
// the whole number it rounds to, gi refuses or keeps the larger count.
#include <gtest/gtest.h>

#include <string>

#include "analysis/symbolic_size.hpp"
#include "fitness/workload/expression.hpp"
#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::pointer;
using test::use_of;

std::string binned(const std::string& guard, const std::string& bin, const std::string& helpers = "") {
  return helpers +
         "__global__ void k(const float* in, unsigned* hist, int n) {\n"
         "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i >= n) return;\n"
         "  const float v = in[i];\n"
         "  if (" + guard + ") atomicAdd(&hist[" + bin + "], 1u);\n"
         "}\n";
}

// A kernel that stores 1 at `index` for each i < n: the index's arithmetic
// on no loaded value.
std::string stored(const std::string& index) {
  return "__global__ void k(float* out, int n) {\n"
         "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) out[" + index + "] = 1.f;\n"
         "}\n";
}

double value(const std::string& count_text, double n) {
  return fitness::evaluate_expression(count_text, {{"n", n}});
}

TEST(RealValues, AFloatBetweenTwoNumbersBinsIntoAKnownCount) {
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 256.0f", "(int)v")), "hist"), "256");
  // `v <= 255.0f` lets 255 itself in: still 256 bins.
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v <= 255.0f", "(int)v")), "hist"), "256");
  // A strict end survives a product: v < 1 gives v * 64 < 64, bins 0-63.
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 1.0f", "(int)(v * 64.0f)")), "hist"), "64");
  // ... where an inclusive one does not: v = 1 bins to 64.
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v <= 1.0f", "(int)(v * 64)")), "hist"), "65");
  // `v > 0.0f` leaves v above 0, not at 1 as a whole number would be: the
  // bin of 0.5 is 0, and 0 - 1 would be below the buffer.
  const auto above = use_of(binned("v > 0.0f && v < 8.0f", "(int)v - 1"));
  EXPECT_NE(count(above, "hist").find("negative"), std::string::npos) << count(above, "hist");
  // floorf and the intrinsics round down too; the bin a shift or mask of it.
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 256.0f", "(int)floorf(v) >> 4")), "hist"), "16");
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 256.0f", "__float2int_rd(v) & 7")), "hist"), "8");
}

// Rounding up: ceilf(v) of v below 255 is at most 255; and a count of
// blocks written ceil((double) n / (double) threads) is ceil_div(n, threads)
// exactly, so it bounds a loop (Rodinia's particle filter sums its partial
// sums so, the threads a file-scope `const int`, a whole number as a macro is).
TEST(RealValues, RoundingUpGivesTheUpperEndAndAnExactQuotient) {
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 255.0f", "(int)ceilf(v)")), "hist"), "256");
  const auto sums = use_of(
      "const int threads_per_block = 512;\n"
      "__global__ void k(double* partial_sums, int n) {\n"
      "  int i = blockDim.x * blockIdx.x + threadIdx.x;\n"
      "  if (i == 0) {\n"
      "    int x;\n"
      "    double sum = 0.0;\n"
      "    int num_blocks = ceil((double) n / (double) threads_per_block);\n"
      "    for (x = 0; x < num_blocks; x++) sum += partial_sums[x];\n"
      "    partial_sums[0] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(sums, "partial_sums"), "ceil_div(n, 512)");
}

// A clamp written with fminf and fmaxf bounds a value no guard does (a NaN
// clamps to the lower end, as fmaxf returns its other operand); min and max
// of floats are the same clamps.
TEST(RealValues, AFloatClampBoundsTheBin) {
  EXPECT_EQ(count(use_of(binned("i >= 0", "(int)fminf(fmaxf(v, 0.0f), 255.0f)")), "hist"), "256");
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 256.0f", "min((int)v, 255) + (int)min(v, 3.0f)")), "hist"), "259");
  // max of a value unbounded above: no upper end.
  const auto above = use_of(binned("i >= 0", "(int)fmaxf(v, 0.0f)"));
  EXPECT_EQ(count(above, "hist").rfind("none: ", 0), 0u) << count(above, "hist");
}

// An 8- or 16-bit unsigned type bounds what it holds: a cast to it wraps or
// saturates into it, and a load from such a buffer is within it. A signed
// one may wrap below 0.
TEST(RealValues, NarrowUnsignedTypesBoundTheirValues) {
  EXPECT_EQ(count(use_of(binned("i >= 0", "(unsigned char)(v * 255.0f)")), "hist"), "256");
  EXPECT_EQ(count(use_of(binned("v >= 0.0f && v < 16.0f", "(unsigned char)v")), "hist"), "16");
  const auto wraps = use_of(stored("(char)i"));
  EXPECT_NE(count(wraps, "out").find("may wrap"), std::string::npos) << count(wraps, "out");
  // Within the type, the operand's own range.
  EXPECT_EQ(count(use_of(binned("i >= 0", "(short)(i & 7)")), "hist"), "8");
  const auto grey = use_of(
      "__global__ void k(const unsigned char* img, unsigned* hist, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) atomicAdd(&hist[img[i]], 1u);\n"
      "}\n");
  EXPECT_EQ(count(grey, "hist"), "256");
  EXPECT_EQ(count(grey, "img"), "n");
}

TEST(RealValues, GuardsThroughBoolHelpersAndEarlyReturns) {
  const std::string helpers =
      "__device__ bool is_grey(float value) { return value >= 0.0f && value < 256.0f; }\n"
      "__device__ int bin_of(float value) { return (int)value >> 2; }\n";
  EXPECT_EQ(count(use_of(binned("is_grey(v)", "bin_of(v)", helpers)), "hist"), "64");
  // The helper's failing before an early return: `if (!is_grey(v)) return;`.
  const auto early = use_of(helpers +
                            "__global__ void k(const float* in, unsigned* hist, int n) {\n"
                            "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i >= n) return;\n"
                            "  const float v = in[i];\n"
                            "  if (!is_grey(v)) return;\n"
                            "  atomicAdd(&hist[bin_of(v)], 1u);\n"
                            "}\n");
  EXPECT_EQ(count(early, "hist"), "64");
  // A helper's limit that is a parameter is what the call passes for it.
  const std::string in_range = "__device__ bool in_range(float value, int bins) { return value >= 0.0f && value < bins; }\n";
  EXPECT_EQ(count(use_of(binned("in_range(v, n)", "(int)v", in_range)), "hist"), "n");
  // The values tested: what gi init draws the input from.
  const auto& in = pointer(use_of(binned("is_grey(v)", "bin_of(v)", helpers)), "in");
  ASSERT_TRUE(in.tested_values.has_value());
  EXPECT_EQ(in.tested_values->first, 0);
  EXPECT_EQ(in.tested_values->second, 256);
  EXPECT_NE(in.tested_values_evidence.find("v = in[i]"), std::string::npos) << in.tested_values_evidence;
}

TEST(RealValues, WhatWouldTakeAFloatForAWholeNumberIsRefusedOrCountedLarger) {
  // One side only: nothing bounds v below.
  const auto one_side = use_of(binned("v < 256.0f", "(int)v"));
  EXPECT_NE(count(one_side, "hist").find("loaded data"), std::string::npos) << count(one_side, "hist");
  // A float min with one side unbounded below: nothing bounds it below.
  const auto minimum = use_of(binned("v < 256.0f", "(int)fminf(v, 255.0f)"));
  EXPECT_EQ(count(minimum, "hist").rfind("none: ", 0), 0u) << count(minimum, "hist");
  // A cast of a value that may lie between -1 and 0 rounds it up to 0, so
  // neither end of i - 4.0f bounds (int)(i - 4.0f): refused.
  const auto negative = use_of(stored("(int)(i - 4.0f) + 4"));
  EXPECT_NE(count(negative, "out").find("between -1 and 0"), std::string::npos) << count(negative, "out");
  // Division by a float literal is no whole-number division: (i / 2.0f) * 4
  // reaches 2 (n - 1), which the whole-number reading (i / 2) * 4 misses for
  // an even n.
  const auto halves = use_of(stored("(int)((i / 2.0f) * 4)"));
  ASSERT_EQ(count(halves, "out").rfind("none: ", 0), std::string::npos) << count(halves, "out");
  for (double n : {4.0, 5.0, 1000.0}) EXPECT_GE(value(count(halves, "out"), n), 2 * (n - 1) + 1) << n;
}

}  // namespace
}  // namespace gi
