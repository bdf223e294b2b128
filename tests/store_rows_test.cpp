// A plain store in rows, `out[y * width + x]` (Analyser::row_size_needs):
// where x reaches past width two threads write one element, and where it
// stops short the elements between rows are never written. gi init asks
// the sizes for rows apart and drafts such a buffer inout unless the rows
// are tied to what x reaches; a guarded kernel (`x < width`) is left as it was.
#include <gtest/gtest.h>

#include "gi/seed/init_sizes.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::pointer;
using test::use_of;

// CubicInterpolation's CopyCastBack: written for a launch of exactly one thread per voxel of a row.
const char* const kExactRows =
    "__global__ void k(float* destination, const float* source, unsigned width) {\n"
    "  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  destination[y * width + x] = 2.f * source[y * width + x];\n"
    "}\n";

TEST(StoreRows, AGuardedRowAsksNothing) {
  const auto u = use_of(
      "__global__ void k(float* out, int nx, int ny) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < nx && y < ny) out[y * nx + x] = 1.f;\n"
      "}\n");
  EXPECT_TRUE(pointer(u, "out").size_needs.empty());
}

TEST(StoreRows, AnExactLaunchsRowsMustNotOverlap) {
  const auto u = use_of(kExactRows);
  const auto& needs = pointer(u, "destination").size_needs;
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].name, "width");
  ASSERT_TRUE(needs[0].at_least_zero);
  EXPECT_EQ(needs[0].at_least_zero->text(), "-threads_x + width");
  EXPECT_TRUE(pointer(u, "source").size_needs.empty());  // reads may overlap
}

TEST(StoreRows, RowsNotTiedToTheLaunchKeepTheElementsBetweenThem) {
  const auto draft = [](const std::vector<std::string>& sizes) {
    return scaffold_spec(kExactRows, "k.cu", std::nullopt, "user", parse_init_sizes(sizes, {}));
  };
  const SpecScaffold apart = draft({"width=2048", "threads_x=1024", "threads_y=512"});
  EXPECT_EQ(apart.spec["parameters"][0]["role"], "inout");
  // Every drafted workload keeps the rows apart.
  for (const auto& w : apart.spec["workloads"]["validate"]) {
    const auto& v = w["variables"];
    EXPECT_GE(v["width"].get<double>(), v["threads_x"].get<double>()) << v.dump();
  }
  // As the host launches it: one thread per voxel of a row.
  const SpecScaffold tied = draft({"width=1024", "threads_x=width", "threads_y=512"});
  EXPECT_EQ(tied.spec["parameters"][0]["role"], "out");
  EXPECT_THROW(draft({"width=512", "threads_x=1024", "threads_y=512"}), std::runtime_error);
}

}  // namespace
}  // namespace gi
