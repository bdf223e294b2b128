// A local declared without a value and assigned once later (Rodinia's
// myocyte: `int bx; ... bx = blockIdx.x; tid = bx * NUMBER_THREADS + tx;`)
// has that assignment as its definition where nothing can come between
// (Analyser::collect_late_definitions), and only there.
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

TEST(LateDefinition, AnAssignmentInTheDeclarationsBlockIsTheDefinition) {
  const auto u = test::use_of(
      "#define NUMBER_THREADS 128\n"
      "__global__ void k(int workload, float* com) {\n"
      "  int bx;\n"
      "  int tx;\n"
      "  int tid, com_pointer;\n"
      "  bx = blockIdx.x;\n"
      "  tx = threadIdx.x;\n"
      "  tid = bx * NUMBER_THREADS + tx;\n"
      "  com_pointer = tid * 3;\n"
      "  if (tid < workload) {\n"
      "    com[com_pointer] = 1.f;\n"
      "    com[com_pointer + 2] = 2.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(u, "com"), "3 * workload");
  // The global index, written for blocks of 128: the grid follows the guard.
  EXPECT_EQ(u.work.written_block, 128);
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "workload");
}

TEST(LateDefinition, NotWhereABranchOrLoopOrAnEarlierUseStandsBetween) {
  // Assigned in a loop's body: a block of its own.
  const auto in_loop = test::use_of(
      "__global__ void k(int n, float* out) {\n"
      "  int j;\n"
      "  for (int r = 0; r < 4; r++) {\n"
      "    j = r * n;\n"
      "  }\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i + j] = 1.f;\n"
      "}\n");
  EXPECT_EQ(test::count(in_loop, "out").rfind("none: ", 0), 0u) << test::count(in_loop, "out");
  // Assigned under an if with no braces: the branch stands between.
  const auto branch = test::use_of(
      "__global__ void k(int n, float* out) {\n"
      "  int j;\n"
      "  if (n > 8) j = 2 * n;\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i + j] = 1.f;\n"
      "}\n");
  EXPECT_NE(test::count(branch, "out"), "3 * n");
  // Assigned twice: no one definition.
  const auto twice = test::use_of(
      "__global__ void k(int n, float* out) {\n"
      "  int j;\n"
      "  j = n;\n"
      "  j = 2 * n;\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i + j] = 1.f;\n"
      "}\n");
  EXPECT_NE(test::count(twice, "out"), "2 * n");
  // The same assignment with nothing between: it counts.
  const auto plain = test::use_of(
      "__global__ void k(int n, float* out) {\n"
      "  int j;\n"
      "  j = 2 * n;\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i + j] = 1.f;\n"
      "}\n");
  EXPECT_EQ(test::count(plain, "out"), "3 * n");
}

}  // namespace
}  // namespace gi
