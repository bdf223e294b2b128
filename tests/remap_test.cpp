// `remap` (grammar/edits/remap.cpp): two thread axes trade places in the
// kernel's text and in the launch's grid. The variant compiles with NVRTC
// and gives the seed's result in the CPU emulator; the same kernel on the
// seed's grid does not; the grid is the other axis's threads in blocks; and
// kernels the swap would break are refused with the reason. CPU only.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis/remap_sites.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "tests/family_test_fixture.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kUser = fs::path(GI_TEST_DATA) / "user";

// scale_rows' train:1 (the first emulated workload): 29 rows of 300 columns, more columns than a block has threads.
constexpr std::size_t kWideCheck = 0;

class Remap : public gi::test::FamilyTest {
 protected:
  // A seed folder of `source` with scale_rows' spec, its entry `entry`.
  fs::path seed_of(const std::string& source, const std::string& entry = "scale_rows") {
    const fs::path dir = dir_ / ("seed-" + std::to_string(seeds_++));
    fs::create_directories(dir);
    std::ofstream(dir / "kernel.cu") << source;
    std::ifstream in(kUser / "scale_rows" / "spec.json");
    std::string spec((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string key = "\"entry\": \"scale_rows\"";
    spec.replace(spec.find(key), key.size(), "\"entry\": \"" + entry + "\"");
    std::ofstream(dir / "spec.json") << spec;
    return dir;
  }

  int seeds_ = 0;
};

TEST_F(Remap, TheRowWalkingKernelSwapsItsAxesAndGivesTheSeedsResult) {
  const gi::Seed seed = gi::load_seed(kUser / "scale_rows");
  const auto candidates = gi::grammar::edit_family("remap").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(gi::grammar::to_string(candidates[0]), "remap:xy");
  const gi::grammar::PatchedKernel variant =
      gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch("remap:xy"), seed.context);
  EXPECT_NE(variant.source.find("int i = blockIdx.y * blockDim.y + threadIdx.y;"), std::string::npos) << variant.source;
  EXPECT_NE(variant.source.find("int j = blockIdx.x * blockDim.x + threadIdx.x;"), std::string::npos) << variant.source;
  EXPECT_NE(variant.source.find("// gi remap:xy: the thread axes x and y trade places"), std::string::npos);
  EXPECT_EQ(variant.launch.swap_axes, "xy");
  compiles(variant.source, "remap:xy");
  EXPECT_EQ(status_of(seed, variant, kWideCheck), gi::fitness::RunStatus::Ok);
  // With line and CUDA edits, through gi emulate (every training workload).
  for (const std::string patch : {"remap:xy", "remap:xy restrict:in restrict:out", "restrict:column_bias remap:xy"}) {
    const auto run = emulate(kUser / "scale_rows", patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << patch << "\n" << run.output;
  }
}

// The checks that pass it see the swapped kernel on the seed's grid: 300
// columns along a block of 256 threads leave 44 unwritten.
TEST_F(Remap, TheSwappedKernelOnTheSeedsGridFails) {
  const gi::Seed seed = gi::load_seed(kUser / "scale_rows");
  gi::grammar::PatchedKernel variant =
      gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch("remap:xy"), seed.context);
  variant.launch.swap_axes.clear();
  EXPECT_NE(status_of(seed, variant, kWideCheck), gi::fitness::RunStatus::Ok);
}

// Each axis gets the blocks the other's threads need; the block keeps its shape.
TEST(RemapLaunch, EachAxisGetsTheBlocksTheOtherAxissThreadsNeed) {
  const gi::fitness::KernelSpec spec = gi::fitness::load_kernel_spec(kUser / "scale_rows");
  gi::fitness::LaunchPlan plan;
  const std::map<std::string, double> vars = {{"rows", 1003}, {"cols", 37}};
  gi::grammar::LaunchEffect effect;
  gi::fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.grid[0], 8u);  // ceil(1003 / 128) blocks of rows
  EXPECT_EQ(plan.grid[1], 37u);
  effect.swap_axes = "xy";
  gi::fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.grid[0], 1u);     // 37 columns' threads in blocks of 128
  EXPECT_EQ(plan.grid[1], 1024u);  // 8 * 128 rows' threads in blocks of 1
  EXPECT_EQ(plan.block[0], 128u);
  EXPECT_EQ(plan.block[1], 1u);
  EXPECT_EQ(gi::grammar::to_string(effect), ";remap=xy");
  // 70,000 rows need 70,000 blocks along y: beyond its 65,535.
  EXPECT_THROW(gi::fitness::set_launch_geometry(plan, spec, {{"rows", 70000}, {"cols", 4}}, 128, effect),
               std::runtime_error);
  effect.swap_axes = "xx";
  EXPECT_THROW(gi::fitness::set_launch_geometry(plan, spec, vars, 128, effect), std::runtime_error);
}

// What the swap would break is refused, naming the line and the reason.
TEST_F(Remap, KernelsTheSwapWouldBreakAreRefusedWithTheirReason) {
  struct Case {
    const char* what;
    std::string source;
    const char* reason;
  };
  const std::string head = "extern \"C\" __global__ void scale_rows(const float* in, const float* row_weight, "
                           "const float* column_bias, int rows, int cols, float* out) {\n";
  const std::string index = "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "    int j = blockIdx.y * blockDim.y + threadIdx.y;\n";
  const std::string body = "        out[i * cols + j] = in[i * cols + j] * row_weight[i] + column_bias[j];\n";
  const std::vector<Case> cases = {
      {"an unguarded y: its grid is exact", head + index + "    if (i < rows) {\n" + body + "    }\n}\n",
       "no guard bounds the global index y"},
      {"shared memory", head + "    __shared__ float w[256];\n" + index +
           "    if (i < rows && j < cols) {\n" + body + "    }\n}\n", "__shared__"},
      {"a shuffle", head + index + "    if (i < rows && j < cols) {\n" + body +
           "        out[0] = __shfl_down_sync(0xffffffffu, out[0], 1);\n    }\n}\n", "warp-level code"},
      {"a helper reading a thread index",
       "__device__ int lane() { return threadIdx.x % 32; }\n" + head + index + "    if (i < rows && j < cols && lane() >= 0) {\n" +
           body + "    }\n}\n",
       "threadIdx in lane, which the kernel calls"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const gi::Seed seed = gi::load_seed(seed_of(c.source));
    const auto& family = gi::grammar::edit_family("remap");
    EXPECT_TRUE(family.candidates(seed.grammar, seed.context).empty());
    const auto why = family.problem(seed.grammar, seed.context, gi::grammar::Edit{"remap", "", "", 0, 0, "xy"});
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find(c.reason), std::string::npos) << *why;
  }
  // A 1-D kernel: no y to trade, and nothing a reader would expect to be a site (no refusal line).
  const gi::Seed row_sum = gi::load_seed(kUser / "row_sum");
  const auto& remap = gi::grammar::edit_family("remap");
  EXPECT_TRUE(remap.candidates(row_sum.grammar, row_sum.context).empty());
  EXPECT_TRUE(remap.refusals(row_sum.grammar, row_sum.context).empty());
  const auto why = remap.problem(row_sum.grammar, row_sum.context, gi::grammar::Edit{"remap", "", "", 0, 0, "xy"});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("no remap:xy site"), std::string::npos) << *why;
  // Two kernels and no entry (a bare .cu file): which one the launch swaps is unknown.
  const auto two = gi::analysis::find_remap_sites(
      gi::grammar::parse_kernel("__global__ void a(int* p) { p[threadIdx.x] = 0; }\n"
                                "__global__ void b(int* p) { p[threadIdx.y] = 0; }\n",
                                "k.cu"),
      "");
  EXPECT_TRUE(two.pairs.empty());
  ASSERT_FALSE(two.refusals.empty());
  EXPECT_NE(two.refusals[0].find("no entry names one"), std::string::npos) << two.refusals[0];
}

// The families whose warps and block-wide loops walk x do not compose with it.
TEST_F(Remap, APatchWithAFamilyWhoseWarpsWalkXIsRefused) {
  const gi::Seed seed = gi::load_seed(seed_of(R"(extern "C" __global__ void scale_rows(const float* in, const float* row_weight,
        const float* column_bias, int rows, int cols, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows && j < cols) {
        atomicAdd(out, in[i * cols + j] * row_weight[i] + column_bias[j]);
    }
}
)"));
  ASSERT_EQ(gi::grammar::edit_family("remap").candidates(seed.grammar, seed.context).size(), 1u);
  const auto aggregate = gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context);
  ASSERT_FALSE(aggregate.empty());
  gi::grammar::Patch patch = gi::grammar::parse_patch("remap:xy");
  patch.edits.push_back(aggregate[0]);
  try {
    gi::grammar::validate_patch(seed.grammar, patch, seed.context);
    ADD_FAILURE() << "validate_patch accepted " << gi::grammar::to_string(patch);
  } catch (const gi::grammar::PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("do not compose"), std::string::npos) << e.what();
  }
}

}  // namespace
