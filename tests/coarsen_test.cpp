// Thread coarsening (grammar/edits/coarsen.cpp): each thread handles K work
// items of the `if (tid < N)` guard and the grid shrinks K times. Checked
// here: the rewrite, where it does not apply, the launch geometry, and that
// every library seed's coarsened variants compile (NVRTC, no GPU). The GPU
// tests run coarsened variants against the reference.
#include <gtest/gtest.h>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

const std::string kKernel =
    "extern \"C\" __global__ void scale(const float* in, int n, float* out) {\n"
    "    int tid;\n"
    "    float v;\n"
    "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (tid < n) {\n"
    "        v = in[tid];\n"
    "        out[tid] = 2.0f * v;\n"
    "    }\n"
    "}\n";

TEST(Coarsen, ConsecutiveItemsLoopOverTheGuardedRegion) {
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  const PatchedKernel k = patch_kernel(g, parse_patch("coarsen:4"));
  EXPECT_EQ(k.source,
            "extern \"C\" __global__ void scale(const float* in, int n, float* out) {\n"
            "    int tid;\n"
            "    float v;\n"
            "    for (int gi_item = 0; gi_item < 4; gi_item++) {\n"
            "        tid = (blockIdx.x * blockDim.x + threadIdx.x) * 4 + gi_item;\n"
            "        if (tid < n) {\n"
            "            v = in[tid];\n"
            "            out[tid] = 2.0f * v;\n"
            "        }\n"
            "    }\n"
            "}\n");
  EXPECT_EQ(k.launch.coarsen, 4);
  EXPECT_EQ(to_string(parse_patch("coarsen:4,consecutive")), "coarsen:4");
}

TEST(Coarsen, StridedItemsKeepNeighbouringThreadsOnNeighbouringItems) {
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  const std::string out = apply_patch(g, parse_patch("coarsen:2,strided"));
  EXPECT_NE(out.find("        tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x;\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(to_string(parse_patch("coarsen:2,strided")), "coarsen:2,strided");
}

TEST(Coarsen, OtherEditsOnTheRegionStillApply) {
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  // The guarded line deleted and a copy inserted: both inside the loop.
  const std::string out = apply_patch(g, parse_patch("coarsen:2 <_k.cu_6> <_k.cu_7>+<_k.cu_6>"));
  EXPECT_NE(out.find("            out[tid] = 2.0f * v;\n            v = in[tid];\n        }\n    }\n}"), std::string::npos)
      << out;
  EXPECT_NO_THROW(Grammar::from_source(out, "k.cu"));
}

TEST(Coarsen, WhereItDoesNotApply) {
  auto problem = [](const std::string& src) {
    return edit_problem(Grammar::from_source(src, "k.cu"), parse_patch("coarsen:2").edits[0]).value_or("legal");
  };
  std::string shared = kKernel;
  shared.replace(shared.find("    float v;"), 11, "    __shared__ float v;");
  EXPECT_NE(problem(shared).find("shared memory or barriers"), std::string::npos);
  std::string early = kKernel;
  early.replace(early.find("        out[tid]"), 8, "        return;\n        out");
  EXPECT_NE(problem(early).find("a return inside the guarded region"), std::string::npos);
  std::string no_guard = kKernel;
  no_guard.replace(no_guard.find("if (tid < n)"), 12, "if (n > tid)");
  EXPECT_NE(problem(no_guard).find("is not `if (tid < ...)`"), std::string::npos);
  EXPECT_EQ(problem(kKernel), "legal");
  EXPECT_NE(edit_problem(Grammar::from_source(kKernel, "k.cu"), parse_patch("coarsen:1").edits[0])
                .value_or("legal")
                .find("2..64"),
            std::string::npos);
}

TEST(Coarsen, GridShrinksByTheFactorRoundingUp) {
  const fitness::KernelSpec spec = fitness::load_kernel_spec(test::source_dir() / "seeds/tools/convolution_x");
  fitness::LaunchPlan plan;
  const std::map<std::string, double> vars = {{"voxelNumber", 1000}, {"imageDimX", 10}, {"imageDimY", 10},
                                              {"imageDimZ", 10}, {"kernelSize", 7}, {"kernelRadius", 3}};
  fitness::set_launch_geometry(plan, spec, vars, 128);
  EXPECT_EQ(plan.grid[0], 8u);  // ceil(1000 / 128)
  LaunchEffect effect;
  effect.coarsen = 3;
  fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.grid[0], 3u);  // ceil(8 / 3): 3 * 128 * 3 >= 1000
}

// Items per thread as a switch: its value is a variable of the spec's launch
// expressions, so the grid shrinks with it.
TEST(Coarsen, SwitchValuesAreLaunchVariables) {
  fitness::KernelSpec spec = fitness::load_kernel_spec(test::source_dir() / "seeds/tools/convolution_x");
  spec.grid[0] = fitness::Expression::parse("ceil_div(voxelNumber, B * ITEMS)");
  spec.shared_bytes = fitness::Expression{};  // whatever the seed's own paths need
  spec.switch_defaults.clear();
  fitness::LaunchPlan plan;
  LaunchEffect effect;
  effect.switches = {{"ITEMS", "4"}, {"PATH", "warp"}};  // a switch that is no number is no launch variable
  fitness::set_launch_geometry(plan, spec, {{"voxelNumber", 1000}}, 64, effect);
  EXPECT_EQ(plan.grid[0], 4u);  // ceil(1000 / 256)
  effect.switches["ITEMS"] = "1";
  fitness::set_launch_geometry(plan, spec, {{"voxelNumber", 1000}}, 64, effect);
  EXPECT_EQ(plan.grid[0], 16u);
  // A workload variable may not hide a switch.
  EXPECT_THROW(fitness::set_launch_geometry(plan, spec, {{"voxelNumber", 1000}, {"ITEMS", 2}}, 64, effect),
               std::runtime_error);
}

// In a seed with switches the site is the plain path's guard (the other
// paths use shared memory, warps or blockIdx elsewhere); a patch that also
// switches the plain path off is rejected, or its loop would wrap dead code
// while the grid shrank.
TEST(Coarsen, OnASeedWithSwitchesItWrapsThePlainPathOnly) {
  const Seed seed = load_seed(test::source_dir() / "seeds/bspline/deformation_field");
  ASSERT_FALSE(seed.context.switches.empty());
  const VariantSource v = variant_source(seed, parse_patch("coarsen:2"));
  EXPECT_NE(v.source.find("for (int gi_item = 0; gi_item < 2; gi_item++) {"), std::string::npos);
  EXPECT_EQ(v.launch.coarsen, 2);
  try {
    variant_source(seed, parse_patch("coarsen:2 define:BSPLINE_PATH=2"));
    FAIL() << "accepted";
  } catch (const PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("is not compiled under switch setting"), std::string::npos) << e.what();
  }
}

// Every library seed has the guarded form; its coarsened variants, both item
// orders, compile.
TEST(Coarsen, EverySeedsCoarsenedVariantsCompile) {
  std::vector<fitness::CompileRequest> requests;
  std::vector<std::string> names;
  for (const auto& dir : test::seed_dirs()) {
    const Seed seed = load_seed(dir);
    const auto candidates = edit_family("coarsen").candidates(seed.grammar, seed.context);
    EXPECT_FALSE(candidates.empty()) << test::seed_name(dir) << ": "
                                     << edit_problem(seed.grammar, seed.context, parse_patch("coarsen:2").edits[0]).value_or("");
    // One factor per seed, alternating the order, keeps the compiles few.
    const Patch p = parse_patch(requests.size() % 2 ? "coarsen:4,strided" : "coarsen:2");
    if (candidates.empty()) continue;
    requests.push_back(variant_request(variant_source(seed, p), seed, Tuning{}, "sm_90"));
    names.push_back(test::seed_name(dir) + " " + to_string(p));
    // Vector loads where a buffer is read only at the item (three seeds).
    if (std::any_of(candidates.begin(), candidates.end(), [](const Edit& e) { return e.literal == "vector"; })) {
      const Patch v = parse_patch("coarsen:8,vector");
      requests.push_back(variant_request(variant_source(seed, v), seed, Tuning{}, "sm_90"));
      names.push_back(test::seed_name(dir) + " " + to_string(v));
    }
  }
  fitness::Compiler compiler(std::nullopt);
  const auto results = compiler.compile_all(requests, 2);
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_TRUE(results[i].ok) << names[i] << ": " << results[i].error;
}

}  // namespace
}  // namespace gi::grammar
