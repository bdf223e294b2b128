// The launch's extents in an index (analysis/parameter_use_ranges.cpp, the
// Member case): under a guard on the global index x, gridDim.x is the grid
// gi launches and blockDim.x the block size, both with the block fixed so
// that a count does not change with tuning; without such a guard gridDim
// is refused, the grid being the user's to give; a guard's limit loaded
// from memory is refused as loaded data.
#include <gtest/gtest.h>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

TEST(GridExtentIndex, GridDimUnderTheGuardIsTheGrid) {
  // Written for this test: each block's first thread writes the count of
  // items its block holds, at its block's number.
  const analysis::ParameterUse u = use_of(R"(
__global__ void per_block(int n, const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && threadIdx.x == 0) out[gridDim.x - 1 - blockIdx.x] = in[i];
}
)");
  EXPECT_EQ(count(u, "out"), "ceil_div(n, 256)");
  EXPECT_GT(u.work.fixed_block_line, 0);
}

TEST(GridExtentIndex, BlockDimBesideTheGuardIsTheFixedBlock) {
  // Written for this test: a block's bytes copied as floats, 64 per block
  // of 256 threads, as Rodinia's dwt2d copies its source.
  const analysis::ParameterUse u = use_of(R"(
__global__ void copy(const unsigned char* src, float* out, int pixels) {
  int x = threadIdx.x;
  int base = blockDim.x * blockIdx.x;
  __shared__ float words[64];
  const float* s = (const float*)src;
  if (x < 64) words[x] = s[(base >> 2) + x];
  __syncthreads();
  if (base + x < pixels) out[base + x] = words[x / 4];
}
)");
  EXPECT_EQ(count(u, "out"), "pixels");
  // Floats (base >> 2) + x, base = 256 * block, x < 64: the last block's
  // 64 floats end at byte 256 * ceil_div(pixels, 256).
  EXPECT_EQ(count(u, "src"), "4 * ceil_div(256 * ceil_div(pixels, 256) - 255, 4) + 252");
  EXPECT_GT(u.work.fixed_block_line, 0);
}

TEST(GridExtentIndex, GridDimWithoutAGuardIsTheUsersGrid) {
  // One block per tile: nothing names the grid, so gi cannot bound it.
  const analysis::ParameterUse u = use_of(R"(
__global__ void tiles(const int* order, float* out) {
  const unsigned bid = blockIdx.y * gridDim.x + blockIdx.x;
  out[bid * 16 + threadIdx.x] = order[bid];
}
)");
  EXPECT_NE(count(u, "order").find("'gridDim.x' is the grid's extent, and no guard on the global index x names its "
                                   "bound"),
            std::string::npos)
      << count(u, "order");
}

TEST(GridExtentIndex, ALimitLoadedFromMemoryIsLoadedData) {
  const analysis::ParameterUse u = use_of(R"(
__global__ void spans(const int* lengths, const float* in, float* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) {
    float s = 0;
    for (int i = 0; i < lengths[t]; i++) s += in[t * 8 + i];
    out[t] = s;
  }
}
)");
  EXPECT_NE(count(u, "in").find("'lengths[t]' is read from memory: a value computed from loaded data"),
            std::string::npos)
      << count(u, "in");
}

}  // namespace
}  // namespace gi
