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
#include "family_test_fixture.hpp"
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

// The commonest guard of all, `if (i < n) y[i] = ...;` with no braces: the
// loop goes round its one statement. A braceless body with a body of its
// own (a for, an if with an else) is left alone, with the reason.
TEST(Coarsen, AGuardOfOnePlainStatementWithoutBraces) {
  const std::string braceless =
      "extern \"C\" __global__ void scale(const float* in, int n, float* out) {\n"
      "    int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    if (tid < n) out[tid] = 2.0f * in[tid];\n"
      "}\n";
  const Grammar g = Grammar::from_source(braceless, "k.cu");
  EXPECT_EQ(edit_problem(g, parse_patch("coarsen:4").edits[0]).value_or("legal"), "legal");
  const std::string out = apply_patch(g, parse_patch("coarsen:4"));
  EXPECT_NE(out.find("for (int gi_item = 0; gi_item < 4; gi_item++) {\n"
                     "        int tid = (blockIdx.x * blockDim.x + threadIdx.x) * 4 + gi_item;\n"
                     "        if (tid < n) out[tid] = 2.0f * in[tid];\n"
                     "    }"),
            std::string::npos)
      << out;
  for (const char* body : {"for (int c = 0; c < 2; ++c) out[tid] += in[tid];",
                           "out[tid] = 1.0f;\n    else out[0] = 0.0f;"}) {
    std::string compound = braceless;
    compound.replace(compound.find("out[tid] = 2.0f * in[tid];"), 26, body);
    EXPECT_NE(edit_problem(Grammar::from_source(compound, "k.cu"), parse_patch("coarsen:4").edits[0])
                  .value_or("legal")
                  .find("a body without braces that is not one plain statement"),
              std::string::npos)
        << body;
  }
}

// An early exit, `if (tid >= n) return;`, guards as well: the loop runs to
// the end of the kernel's body and each return ends one item. A return
// inside a loop there would end that loop instead: refused.
TEST(Coarsen, AnEarlyExitGuardsTheRestOfTheKernel) {
  const std::string early =
      "extern \"C\" __global__ void scale(const float* in, int n, float* out) {\n"
      "    int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    if (tid >= n) return;\n"
      "    if (in[tid] < 0.0f) { out[tid] = 0.0f; return; }\n"
      "    out[tid] = 2.0f * in[tid];\n"
      "}\n";
  const Grammar g = Grammar::from_source(early, "k.cu");
  EXPECT_EQ(edit_problem(g, parse_patch("coarsen:4,vector").edits[0]).value_or("legal"), "legal");
  const std::string out = apply_patch(g, parse_patch("coarsen:4"));
  EXPECT_NE(out.find("    for (int gi_item = 0; gi_item < 4; gi_item++) {\n"
                     "        int tid = (blockIdx.x * blockDim.x + threadIdx.x) * 4 + gi_item;\n"
                     "        if (tid >= n) continue;\n"
                     "        if (in[tid] < 0.0f) { out[tid] = 0.0f; continue; }\n"
                     "        out[tid] = 2.0f * in[tid];\n"
                     "    }\n"),
            std::string::npos)
      << out;
  std::string in_loop = early;
  in_loop.replace(in_loop.find("if (in[tid] < 0.0f) { out[tid] = 0.0f; return; }"), 48,
                  "for (int c = 0; c < 3; ++c) if (in[tid] < c) return;");
  EXPECT_NE(edit_problem(Grammar::from_source(in_loop, "k.cu"), parse_patch("coarsen:4").edits[0])
                .value_or("legal")
                .find("a return inside a loop of the region"),
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

// `coarsen:K,vector` (grammar/edits/vector_loads.*): consecutive items, and
// each buffer read only as p[tid] loaded as vectors before the thread's
// loop; the rewrite, where it is refused and why, and (CPU emulator) that
// the variants give the seed's results, a tail included, and that a
// variant that unpacks a vector wrongly fails.
TEST(CoarsenVector, ReadOnlyBuffersAreLoadedAsVectorsBeforeTheLoop) {
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  const std::string out = apply_patch(g, parse_patch("coarsen:8,vector"));
  EXPECT_NE(out.find("    const int gi_first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;"), std::string::npos) << out;
  EXPECT_NE(out.find("if (gi_first + 8 <= (n) && ((unsigned long long)(in + gi_first) & 15ull) == 0ull) {"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("const float4 gi_w = *reinterpret_cast<const float4*>(in + gi_first + gi_v);"), std::string::npos)
      << out;
  EXPECT_NE(out.find("            v = gi_vec_in[gi_item];\n            out[tid] = 2.0f * v;"), std::string::npos) << out;
  EXPECT_NE(out.find("        tid = (blockIdx.x * blockDim.x + threadIdx.x) * 8 + gi_item;"), std::string::npos) << out;
  EXPECT_EQ(to_string(parse_patch("coarsen:8,vector")), "coarsen:8,vector");
  // Two items a thread: one float2.
  EXPECT_NE(apply_patch(g, parse_patch("coarsen:2,vector")).find("const float2 gi_w"), std::string::npos);
  // A later coarsen without vectors takes its place whole: no copy read where none is made.
  const std::string replaced = apply_patch(g, parse_patch("coarsen:8,vector coarsen:4"));
  EXPECT_EQ(replaced.find("gi_vec_in"), std::string::npos) << replaced;
  EXPECT_EQ(replaced, apply_patch(g, parse_patch("coarsen:4")));
}

TEST(CoarsenVector, RefusedWithTheReason) {
  const auto problem = [](const std::string& source, const std::string& patch = "coarsen:4,vector") {
    return edit_problem(Grammar::from_source(source, "k.cu"), parse_patch(patch).edits[0]).value_or("legal");
  };
  EXPECT_EQ(problem(kKernel), "legal");
  std::string neighbour = kKernel;
  neighbour.replace(neighbour.find("v = in[tid];"), 12, "v = in[tid] + in[tid + 1];");
  EXPECT_NE(problem(neighbour).find("no buffer is read only as p[tid]"), std::string::npos) << problem(neighbour);
  std::string local_bound = kKernel;
  local_bound.replace(local_bound.find("if (tid < n)"), 12, "if (tid < m)");
  local_bound.replace(local_bound.find("    float v;\n"), 12, "    float v;\n    int m = n / 2;\n");
  EXPECT_NE(problem(local_bound).find("the guard's bound over kernel parameters ('m')"), std::string::npos)
      << problem(local_bound);
  EXPECT_NE(problem(kKernel, "coarsen:6,vector").find("a power of two"), std::string::npos);
  std::string written = kKernel;
  written.replace(written.find("const float* in"), 15, "float* in");
  written.replace(written.find("out[tid] = 2.0f * v;"), 20, "in[tid] = 2.0f * v;");
  EXPECT_NE(problem(written).find("no buffer is read only"), std::string::npos) << "'in' is written: " << problem(written);
}

class CoarsenVectorFamily : public gi::test::FamilyTest {};

// Against the seed in the emulator: the user dot product (a tail of 1003 %
// 8 items on its small check) and the library's intensity range, exact.
TEST_F(CoarsenVectorFamily, VariantsGiveTheSeedsResults) {
  const std::filesystem::path dot = std::filesystem::path(GI_TEST_DATA) / "user/dot_product";
  for (const std::string& patch : {std::string("coarsen:4,vector"), std::string("aggregate:<_kernel.cu_7>=block coarsen:8,vector")}) {
    const auto run = emulate(dot, patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << patch << "\n" << run.output;
  }
  const std::filesystem::path minmax = gi::test::source_dir() / "seeds/tools/intensity_minmax";
  const auto run = emulate(minmax, "aggregate:all=block coarsen:8,vector");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const gi::Seed seed = gi::load_seed(dot);
  const auto candidates = edit_family("coarsen").candidates(seed.grammar, seed.context);
  EXPECT_TRUE(std::any_of(candidates.begin(), candidates.end(), [](const auto& e) { return e.literal == "vector"; }));
}

// An 8-bit image (a threshold into a mask): its reads as uchar4, aligned to
// 4 bytes, against the seed in the emulator on a small check of 1003 bytes.
TEST_F(CoarsenVectorFamily, AnEightBitImageIsLoadedAsUchar4) {
  const std::filesystem::path kernel = dir_ / "threshold.cu";
  std::ofstream(kernel) << "__global__ void threshold(const unsigned char* image, unsigned char* mask, int n, int level) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) {\n"
                           "    mask[i] = image[i] > level ? 255 : 0;\n"
                           "  }\n"
                           "}\n";
  const auto init = gi::test::run_gi("init \"" + kernel.string() + "\" --out \"" + (dir_ / "seed").string() +
                           "\" --size n=100000 --size level=100");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  const gi::Seed seed = gi::load_seed(dir_ / "seed");
  const std::string out = apply_patch(seed.grammar, parse_patch("coarsen:8,vector"));
  EXPECT_NE(out.find("const uchar4 gi_w = *reinterpret_cast<const uchar4*>(image + gi_first + gi_v);"), std::string::npos) << out;
  EXPECT_NE(out.find("& 3ull) == 0ull"), std::string::npos) << out;
  EXPECT_NE(apply_patch(seed.grammar, parse_patch("coarsen:2,vector")).find("const uchar2 gi_w"), std::string::npos);
  compiles(out, "coarsen:8,vector on unsigned char");
  for (const char* patch : {"coarsen:4,vector", "coarsen:16,vector"}) {
    const auto run = emulate(dir_ / "seed", patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << patch << "\n" << run.output;
  }
}

// The user kernel count_positive exits early (`if (i >= n) return;`):
// coarsened alone and with aggregate, which turns the exit into a predicate.
TEST_F(CoarsenVectorFamily, AnEarlyExitKernelCoarsenedGivesTheSeedsResults) {
  const std::filesystem::path count = std::filesystem::path(GI_TEST_DATA) / "user/count_positive";
  for (const char* patch : {"coarsen:4", "coarsen:8,vector", "aggregate:all=block coarsen:4,strided"}) {
    const auto run = emulate(count, patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << patch << "\n" << run.output;
  }
}

TEST_F(CoarsenVectorFamily, AVariantThatUnpacksWronglyFails) {
  const gi::Seed seed = gi::load_seed(std::filesystem::path(GI_TEST_DATA) / "user/dot_product");
  PatchedKernel variant =
      patch_kernel(seed.grammar, parse_patch("coarsen:4,vector"), seed.context);
  compiles(variant.source, "coarsen:4,vector");
  EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::Ok);
  const std::string unpack = "gi_vec_x[gi_v + 1] = gi_w.y;";
  const std::size_t at = variant.source.find(unpack);
  ASSERT_NE(at, std::string::npos) << variant.source;
  variant.source.replace(at, unpack.size(), "gi_vec_x[gi_v + 1] = gi_w.x;");
  EXPECT_EQ(status_of(seed, variant, 0), gi::fitness::RunStatus::WrongOutput);
}

}  // namespace
}  // namespace gi::grammar
