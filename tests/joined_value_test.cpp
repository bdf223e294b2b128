// gi init's counts where a local gets its value in several places and no
// straight-line path decides which it holds at the read (Rodinia's particle
// filter: `int index = -1;`, set in a search loop, then `if (index == -1)
// index = n - 1;`): any value one of its assignments gives it, and a failed
// `== c` test moves an end at c (analysis/parameter_use.hpp).
#include <gtest/gtest.h>

#include "tests/parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

const std::string kSearch =
    "__global__ void find_index(const double* cdf, const double* u, const double* xs, double* out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    int index = -1;\n"
    "    int x;\n"
    "    for (x = 0; x < n; x++) {\n"
    "      if (cdf[x] >= u[i]) {\n"
    "        index = x;\n"
    "        break;\n"
    "      }\n"
    "    }\n";

TEST(JoinedValue, EveryAssignmentsValueWithAFailedEqualityMovingAnEnd) {
  const auto u = use_of(kSearch + "    if (index == -1) {\n      index = n - 1;\n    }\n    out[i] = xs[index];\n  }\n}\n");
  EXPECT_EQ(count(u, "xs"), "n");
  EXPECT_EQ(count(u, "cdf"), "n");
  // Written `!=` the other way round: the same.
  const auto ne = use_of(kSearch + "    if (index != -1) out[i] = xs[index];\n  }\n}\n");
  EXPECT_EQ(count(ne, "xs"), "n");
}

TEST(JoinedValue, RefusedWhereAnAssignmentCouldLeaveItNegative) {
  // No test against -1: index may still be -1 at the read.
  const auto u = use_of(kSearch + "    out[i] = xs[index];\n  }\n}\n");
  EXPECT_NE(count(u, "xs").find("the index 'index' may be negative"), std::string::npos) << count(u, "xs");
  // An update other than `=` (index += 2): gi does not join it.
  const auto stepped = use_of(kSearch + "    if (index == -1) index = n - 1;\n    else index += 0;\n"
                                        "    out[i] = xs[index];\n  }\n}\n");
  EXPECT_EQ(count(stepped, "xs").rfind("none: ", 0), 0u) << count(stepped, "xs");
  // Declared without a value: a path may read it unset.
  const auto unset = use_of(
      "__global__ void k(const float* xs, float* out, const int* flags, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  int j;\n"
      "  if (flags[i] > 0) j = i;\n"
      "  for (int t = 0; t < 2; ++t) if (flags[t] < 0) j = 0;\n"
      "  out[i] = xs[j];\n"
      "}\n");
  EXPECT_EQ(count(unset, "xs").rfind("none: ", 0), 0u) << count(unset, "xs");
}

}  // namespace
}  // namespace gi
