// gi init's reading of NiftyReg 2's structured bindings
// (analysis/parameter_use_bindings.cpp): `const auto [x, y, z] =
// IndexToDims<is3d>(index, dims);` splits a flat voxel index into its
// coordinates, so indices built from them are bounded by the image's
// sizes; a binding from any other call still bounds nothing.
#include <gtest/gtest.h>

#include <string>

#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

// The helper as NiftyReg declares it (its body is not what gi reads), and a
// kernel that reads the voxel at (x, y, z) of a volume `dims` wide.
std::string voxel(const std::string& binding, const std::string& index) {
  return "template <bool is3d> __device__ int3 IndexToDims(const int index, const int3 dims);\n"
         "__device__ int3 IndexToDims(const int index, const int3 dims);\n"
         "__device__ int3 Other(const int index, const int3 dims);\n"
         "__global__ void k(const float* in, float* out, int3 dims, unsigned n) {\n"
         "  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (tid < n) {\n"
         "    " + binding + "\n"
         "    out[tid] = in[" + index + "];\n"
         "  }\n"
         "}\n";
}

TEST(StructuredBinding, IndexToDimsSplitsAVoxelIndexIntoItsCoordinates) {
  // 3-D: x and y below dims.x and dims.y, z below the planes n covers.
  const std::string zyx = "(z * dims.y + y) * dims.x + x";
  EXPECT_EQ(count(use_of(voxel("const auto [x, y, z] = IndexToDims<true>(tid, dims);", zyx)), "in"),
            "ceil_div(n, dims_x * dims_y) * dims_x * dims_y");
  // The overload that picks by dims.z reads as the 3-D split.
  EXPECT_EQ(count(use_of(voxel("const auto [x, y, z] = IndexToDims(tid, dims);", zyx)), "in"),
            "ceil_div(n, dims_x * dims_y) * dims_x * dims_y");
  // Each coordinate alone: x and y within the image's row and column.
  EXPECT_EQ(count(use_of(voxel("const auto [x, y, z] = IndexToDims<true>(tid, dims);", "x")), "in"), "dims_x");
  EXPECT_EQ(count(use_of(voxel("const auto [x, y, z] = IndexToDims<true>(tid, dims);", "y")), "in"), "dims_y");
  // 2-D: y the row n reaches, z 0.
  EXPECT_EQ(count(use_of(voxel("const auto [x, y, z] = IndexToDims<false>(tid, dims);", "y * dims.x + x + z")), "in"),
            "ceil_div(n, dims_x) * dims_x");
}

TEST(StructuredBinding, OtherBindingsBoundNothing) {
  // A helper gi does not read: its names have no definition.
  const std::string other = count(use_of(voxel("const auto [x, y, z] = Other(tid, dims);", "x")), "in");
  EXPECT_EQ(other.rfind("none", 0), 0u) << other;
  EXPECT_NE(other.find("nothing bounds 'x'"), std::string::npos) << other;
  // A name the body assigns again is no longer the split's.
  const std::string moved = count(
      use_of(voxel("auto [x, y, z] = IndexToDims<true>(tid, dims); x += 7;", "x")), "in");
  EXPECT_EQ(moved.rfind("none", 0), 0u) << moved;
}

}  // namespace
}  // namespace gi
