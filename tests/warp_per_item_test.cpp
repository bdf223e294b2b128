// The warp_per_item family (grammar/edits/warp_per_item.cpp) and its site
// analysis (analysis/warp_per_item_sites.hpp): which loops a group of lanes
// may share and why the others may not; the variants compile with NVRTC and
// give the seed's result in the CPU emulator (row_sum, the library's
// voxel_to_node_gradient); a variant without the combine does not; the
// launch grows the grid by the group size. CPU only.
#include <gtest/gtest.h>


#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "analysis/warp_per_item_sites.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/library/seed_emulation.hpp"
#include "gi/search/edit_operators.hpp"
#include "gi/search/search.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "test_support.hpp"
#include "tests/family_test_fixture.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kUser = fs::path(GI_TEST_DATA) / "user";
const fs::path kPlain = fs::path(GI_TEST_DATA) / "plain";

gi::analysis::WarpPerItemSites sites(const std::string& source) {
  return gi::analysis::find_warp_per_item_sites(gi::grammar::parse_kernel(source, "k.cu"));
}
gi::analysis::WarpPerItemSites sites_of_file(const fs::path& file) {
  return sites(gi::read_text_file(file));
}
int line_of(const gi::grammar::ParsedKernel& k, std::size_t element) { return k.tokens[k.elements[element].tokens.first].line; }

// The one refusal of a kernel with one loop.
std::string refusal(const std::string& source) {
  const auto found = sites(source);
  EXPECT_TRUE(found.sites.empty()) << source;
  EXPECT_EQ(found.refusals.size(), 1u) << source;
  return found.refusals.empty() ? std::string() : found.refusals[0];
}

TEST(WarpPerItemSites, RowSumsLoopIsASiteWithOneSumAndOneStore) {
  const std::string source = gi::read_text_file(kUser / "row_sum/kernel.cu");
  const auto k = gi::grammar::parse_kernel(source, "kernel.cu");
  const auto found = gi::analysis::find_warp_per_item_sites(k);
  ASSERT_EQ(found.sites.size(), 1u) << (found.refusals.empty() ? "" : found.refusals[0]);
  const auto& s = found.sites[0];
  EXPECT_EQ(line_of(k, s.loop), 8);
  EXPECT_EQ(s.variable, "column");
  ASSERT_EQ(s.sums.size(), 1u);
  EXPECT_EQ(s.sums[0].name, "sum");
  EXPECT_EQ(s.sums[0].type, "float");
  ASSERT_EQ(s.stores.size(), 1u);
  EXPECT_EQ(line_of(k, s.stores[0]), 11);
}

// Each reason a loop is not shared, with the line and the name.
// row_max: a while loop from a pointer to the row, keeping the maximum
// through a helper `return a > b ? a : b;`. A site with one extremum (the
// helper's) and the while's V++ as its step.
TEST(WarpPerItemSites, AWhileLoopKeepingAMaximumThroughAHelperIsASite) {
  const std::string source = gi::read_text_file(kUser / "row_max/kernel.cu");
  const auto k = gi::grammar::parse_kernel(source, "kernel.cu");
  const auto found = gi::analysis::find_warp_per_item_sites(k);
  ASSERT_EQ(found.sites.size(), 1u) << (found.refusals.empty() ? "" : found.refusals[0]);
  const auto& s = found.sites[0];
  EXPECT_EQ(line_of(k, s.loop), 14);
  EXPECT_EQ(s.variable, "column");
  EXPECT_EQ(line_of(k, s.increment), 16);
  ASSERT_EQ(s.extrema.size(), 1u);
  EXPECT_EQ(s.extrema[0].name, "best");
  EXPECT_EQ(s.extrema[0].function, "larger");
  EXPECT_TRUE(s.sums.empty());
}

// Maxima and minima through the math library in a for loop are sites too;
// one variable kept as a maximum and a minimum is not, nor a while loop
// whose body may continue past its V++ or whose V++ is not its last line.
TEST(WarpPerItemSites, ExtremaAndWhileLoopsAndWhatIsRefused) {
  const std::string head = "__global__ void k(const float* x, int n, int m, float* out) {\n"
                           "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n";
  const auto both = sites(head + "    float hi = x[0];\n    float lo = x[0];\n    for (int i = 1; i < m; i++) {\n"
                                 "        hi = fmaxf(hi, x[i]);\n        lo = fminf(x[i] * 2.0f, lo);\n    }\n"
                                 "    out[t] = hi - lo;\n}\n");
  ASSERT_EQ(both.sites.size(), 1u) << (both.refusals.empty() ? "" : both.refusals[0]);
  ASSERT_EQ(both.sites[0].extrema.size(), 2u);
  EXPECT_EQ(both.sites[0].extrema[0].function + " " + both.sites[0].extrema[1].function, "fmaxf fminf");
  EXPECT_NE(refusal(head + "    float v = x[0];\n    for (int i = 1; i < m; i++) {\n        v = fmaxf(v, x[i]);\n"
                           "        v = fminf(v, 1.0f);\n    }\n    out[t] = v;\n}\n")
                .find("line 5: v is carried from one iteration to the next and is no sum"),
            std::string::npos);
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    int i = 0;\n    while (i < m) {\n        if (x[i] < 0.0f) continue;\n"
                           "        s += x[i];\n        i++;\n    }\n    out[t] = s;\n}\n")
                .find("line 5: the loop is not `while (V < E) { ... V++; }`"),
            std::string::npos);
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    int i = 0;\n    while (i < m) {\n        i++;\n        s += x[i];\n"
                           "    }\n    out[t] = s;\n}\n")
                .find("line 5: the loop is not `while (V < E) { ... V++; }`"),
            std::string::npos);
  // The counter read after the loop holds a lane's own last value: refused.
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    int i = 0;\n    while (i < m) {\n        s += x[i];\n        i++;\n"
                           "    }\n    out[t] = s + i;\n}\n")
                .find("i, assigned in the loop"),
            std::string::npos);
}

TEST(WarpPerItemSites, RefusesWithTheLineAndTheName) {
  const std::string head = "__global__ void k(const float* x, int n, int m, float* out) {\n"
                           "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n";
  // A store in the body.
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    for (int i = 0; i < m; i++) {\n        s += x[i];\n        out[i] = s;\n    }\n}\n")
                .find("line 4: line 6: the loop body writes memory"),
            std::string::npos);
  // A value other than a sum, read after the loop.
  EXPECT_NE(refusal(head + "    float s = 0.0f, last = 0.0f;\n    for (int i = 0; i < m; i++) {\n        s += x[i];\n"
                           "        last = x[i];\n    }\n    out[t] = s + last;\n}\n")
                .find("line 8: last, assigned in the loop at line 6, is read after it and is no sum"),
            std::string::npos);
  // A value carried from one iteration to the next.
  EXPECT_NE(refusal(head + "    float s = 0.0f, prev = 0.0f;\n    for (int i = 0; i < m; i++) {\n        s += prev * x[i];\n"
                           "        prev = x[i];\n    }\n    out[t] = s;\n}\n")
                .find("line 5: prev is carried from one iteration to the next and is no sum"),
            std::string::npos);
  // A barrier anywhere in the kernel.
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    for (int i = 0; i < m; i++) {\n        s += x[i];\n    }\n"
                           "    __syncthreads();\n    out[t] = s;\n}\n")
                .find("the kernel uses a barrier or warp collective (__syncthreads) at line 7"),
            std::string::npos);
  // threadIdx outside the index line.
  EXPECT_NE(refusal(head + "    float s = x[threadIdx.x];\n    for (int i = 0; i < m; i++) {\n        s += x[i];\n    }\n    out[t] = s;\n}\n")
                .find("the kernel uses threadIdx at line 3"),
            std::string::npos);
  // No global index.
  EXPECT_NE(refusal("__global__ void k(const float* x, int m, float* out) {\n    float s = 0.0f;\n"
                    "    for (int i = 0; i < m; i++) {\n        s += x[i];\n    }\n    out[blockIdx.x] = s;\n}\n")
                .find("no global index line"),
            std::string::npos);
  // A break out of the loop.
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    for (int i = 0; i < m; i++) {\n        if (x[i] < 0.0f) break;\n        s += x[i];\n    }\n"
                           "    out[t] = s;\n}\n")
                .find("line 5: a break leaves the loop"),
            std::string::npos);
  // Memory written before the loop.
  EXPECT_NE(refusal(head + "    out[t] = 0.0f;\n    float s = 0.0f;\n    for (int i = 0; i < m; i++) {\n        s += x[i];\n    }\n"
                           "    out[t] = s;\n}\n")
                .find("line 3: the kernel writes memory before the loop"),
            std::string::npos);
  // A loop that sums nothing.
  EXPECT_NE(refusal(head + "    float s = 0.0f;\n    for (int i = 0; i < m; i++) {\n        s = x[i];\n    }\n    out[t] = 1.0f;\n}\n")
                .find("the loop sums nothing"),
            std::string::npos);
}

// Each of the three nested loops is a site: every level sums into sumX, sumY, sumZ.
TEST(WarpPerItemSites, VoxelToNodeGradientsThreeLoopsAreSites) {
  const std::string source = gi::read_text_file(kPlain / "tools_voxel_to_node_gradient.cu");
  const auto k = gi::grammar::parse_kernel(source, "kernel.cu");
  const auto found = gi::analysis::find_warp_per_item_sites(k);
  ASSERT_EQ(found.sites.size(), 3u) << (found.refusals.empty() ? "" : found.refusals[0]);
  EXPECT_TRUE(found.refusals.empty()) << found.refusals[0];
  for (const auto& s : found.sites) {
    ASSERT_EQ(s.sums.size(), 3u);
    EXPECT_EQ(s.sums[0].name, "sumX");
    ASSERT_EQ(s.stores.size(), 1u);
  }
}

// Block matching: every loop is a site: the sums over a block's voxels, the
// warped mean's loops with their flag `inside`, and the displacement loops
// with their record of the best NCC (k heads a perfect nest of three, j of two).
TEST(WarpPerItemSites, BlockMatchingsLoopsAreSitesWithTheirFlagAndRecord) {
  const auto found = sites_of_file(kPlain / "blockmatching_ncc_block_matching.cu");
  std::vector<std::string> lines;
  const auto k = gi::grammar::parse_kernel(gi::read_text_file(kPlain / "blockmatching_ncc_block_matching.cu"), "k.cu");
  for (const auto& s : found.sites) lines.push_back(std::to_string(line_of(k, s.loop)));
  std::string all;
  for (const auto& r : found.refusals) all += r + "\n";
  EXPECT_EQ(lines, (std::vector<std::string>{"58", "60", "62", "77", "79", "81", "94", "95", "96", "99", "101", "103", "123",
                                             "125", "127"}))
      << all;
  for (const auto& s : found.sites) {
    const int line = line_of(k, s.loop);
    if (line == 94 || line == 95 || line == 96) {
      ASSERT_EQ(s.records.size(), 1u) << line;
      EXPECT_EQ(s.records[0].op, ">");
      EXPECT_EQ(s.records[0].key, "result");
      EXPECT_EQ(s.records[0].score, "result.w");
      ASSERT_EQ(s.records[0].others.size(), 3u);
      EXPECT_EQ(s.records[0].others[2].first, "result.z");
      EXPECT_EQ(s.nest.size(), line == 94 ? 3u : line == 95 ? 2u : 0u) << line;
      EXPECT_EQ(s.literal_trips, -1);
      EXPECT_TRUE(s.flags.empty());  // inside is set again in every iteration: a temporary
    }
    if (line == 99 || line == 101 || line == 103) {
      ASSERT_EQ(s.flags.size(), 1u) << line;
      EXPECT_EQ(s.flags[0].name, "inside");
      EXPECT_EQ(s.flags[0].value, "0");
      EXPECT_EQ(s.sums.size(), 1u);  // warpedMean
      EXPECT_EQ(s.literal_trips, 4);
    }
  }
}

// A maximum kept with its position by one comparison is a site (each of
// the four comparisons); a record assigned or read outside its comparison,
// or a comparison with something the body does not assign, is refused.
TEST(WarpPerItemSites, RecordsOfAMaximumAreSitesAndOthersAreRefused) {
  const std::string head = "__global__ void k(const float* x, int n, int m, float limit, float* out) {\n"
                           "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    float best = -1.0f;\n    int at = -1;\n"
                           "    for (int i = 0; i < m; i++) {\n";
  const std::string tail = "    }\n    out[t] = best + at;\n}\n";
  for (const char* op : {">", ">=", "<", "<="}) {
    const auto found = sites(head + "        if (x[i] " + op + " best) {\n            best = x[i];\n            at = i;\n        }\n" + tail);
    ASSERT_EQ(found.sites.size(), 1u) << op << (found.refusals.empty() ? "" : found.refusals[0]);
    ASSERT_EQ(found.sites[0].records.size(), 1u);
    EXPECT_EQ(found.sites[0].records[0].op, op);
    EXPECT_EQ(found.sites[0].records[0].key, "best");
    EXPECT_EQ(found.sites[0].records[0].others, (std::vector<std::pair<std::string, std::string>>{{"at", "int"}}));
  }
  // The position also assigned outside the comparison.
  EXPECT_NE(refusal(head + "        if (x[i] > best) {\n            best = x[i];\n            at = i;\n        }\n"
                           "        if (x[i] < -0.5f) at = -2;\n" + tail)
                .find("at, of the record the comparison at line 6 keeps, is assigned outside it at line 10"),
            std::string::npos);
  // The record read outside its comparison (a second best would need it).
  EXPECT_NE(refusal(head + "        float gap = x[i] - best;\n        if (x[i] > best) {\n            best = x[i];\n"
                           "            at = i;\n        }\n        if (gap > 0.0f) {}\n" + tail)
                .find("best, of the record the comparison at line 7 keeps, is read at line 6"),
            std::string::npos);
  // A comparison with something else: the record never takes what it was compared with.
  EXPECT_NE(refusal(head + "        if (x[i] > limit) {\n            best = x[i];\n            at = i;\n        }\n" + tail)
                .find("is read after it and is no sum (no record of a maximum or minimum kept by the comparison at line 6: "
                      "limit, compared with, is not assigned in the comparison's body)"),
            std::string::npos);
  // A flag is a site; two constants are not (the last one set would win).
  const std::string flag_head = "__global__ void k(const float* x, int m, int* out) {\n"
                                "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n    int found = 0;\n"
                                "    for (int i = 0; i < m; i++) {\n";
  const auto flagged = sites(flag_head + "        if (x[i] < 0.0f) found = 1;\n    }\n    out[t] = found;\n}\n");
  ASSERT_EQ(flagged.sites.size(), 1u) << (flagged.refusals.empty() ? "" : flagged.refusals[0]);
  ASSERT_EQ(flagged.sites[0].flags.size(), 1u);
  EXPECT_EQ(flagged.sites[0].flags[0].value, "1");
  EXPECT_NE(refusal(flag_head + "        if (x[i] < 0.0f) found = 1;\n        if (x[i] > 2.0f) found = 2;\n    }\n"
                                "    out[t] = found;\n}\n")
                .find("found, assigned in the loop at line 5, is read after it and is no sum"),
            std::string::npos);
}

TEST(WarpPerItemSites, TheExactJacobianGradientsThreeLoopsAreSites) {
  const auto found = sites_of_file(kPlain / "bspline_log_jacobian_gradient_exact.cu");
  EXPECT_EQ(found.sites.size(), 3u);
  EXPECT_TRUE(found.refusals.empty()) << found.refusals[0];
}

using WarpPerItemFamily = gi::test::FamilyTest;

TEST_F(WarpPerItemFamily, EveryRowSumVariantCompilesAndGivesTheSeedsResult) {
  const gi::Seed seed = gi::load_seed(kUser / "row_sum");
  const auto candidates = gi::grammar::edit_family("warp_per_item").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), seed.context.warp_group_sizes.size());
  for (const auto& edit : candidates) {
    const gi::grammar::Patch patch{{edit}};
    const std::string text = gi::grammar::to_string(patch);
    const gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(seed.grammar, patch, seed.context);
    EXPECT_EQ(variant.launch.group, edit.value);
    compiles(variant.source, text);
    const auto run = emulate(kUser / "row_sum", text);
    EXPECT_EQ(run.exit_code, 0) << text << "\n" << run.output;
    EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  }
  // The other group sizes, from the patch text.
  for (const char* edit : {"warp_per_item:<for_kernel.cu_8>=4", "warp_per_item:<for_kernel.cu_8>=16"}) {
    const auto run = emulate(kUser / "row_sum", edit);
    EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
  }
}

TEST_F(WarpPerItemFamily, RowSumsVariantReadsNeighbouringColumnsInNeighbouringLanes) {
  const gi::Seed seed = gi::load_seed(kUser / "row_sum");
  const std::string source =
      gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch("warp_per_item:<for_kernel.cu_8>=32"), seed.context);
  for (const char* expected :
       {"    const int gi_lane = threadIdx.x % 32;  // gi warp_per_item: 32 lanes share each item\n"
        "    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n"
        "    if (row >= rows) return;\n",
        "        if (gi_lane != 0) sum = 0;  // the value before the loop counts once\n"
        "        for (int column = gi_lane; column < cols; column += 32) {\n"
        "            sum += matrix[row * cols + column];\n"
        "        }\n",
        "            sum += __shfl_xor_sync(gi_mask, sum, gi_step, 32);\n",
        "    if (gi_lane == 0) sums[row] = sum;\n"})
    EXPECT_NE(source.find(expected), std::string::npos) << expected << "\nin\n" << source;
}

// The checks that pass the variants above do see a wrong one: without the
// combine, the first lane stores its own partial sum only.
TEST_F(WarpPerItemFamily, AVariantWithoutTheCombineFails) {
  const gi::Seed seed = gi::load_seed(kUser / "row_sum");
  gi::grammar::PatchedKernel variant =
      gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch("warp_per_item:<for_kernel.cu_8>=32"), seed.context);
  const std::size_t at = variant.source.find("sum += __shfl_xor_sync");
  ASSERT_NE(at, std::string::npos);
  variant.source.erase(at, variant.source.find('\n', at) - at);
  EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::WrongOutput);
}

// The library seed at its default switch (the plain path): the innermost
// loop, the one over x, shared by 8 lanes, against the CPU reference.
TEST_F(WarpPerItemFamily, TheLibrarysVoxelToNodeGradientPassesItsChecksWithItsXLoopShared) {
  const fs::path dir = gi::test::source_dir() / "seeds/tools/voxel_to_node_gradient";
  const gi::Seed seed = gi::load_seed(dir);
  const auto candidates = gi::grammar::edit_family("warp_per_item").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 3 * seed.context.warp_group_sizes.size());  // z, y and x, on the plain path only
  const int x_loop = gi::test::last_rule_line_holding(seed, "for (int x = xFirst; x <= xLast; x++)");
  const std::string edit = "warp_per_item:<for_kernel.cu_" + std::to_string(x_loop) + ">=8";
  compiles(gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch(edit), seed.context), edit);
  const auto run = emulate(dir, edit);
  EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
  // The z loop as well: each lane takes its own planes.
  const int z_loop = gi::test::last_rule_line_holding(seed, "for (int z = zFirst; z <= zLast; z++)");
  const auto z = emulate(dir, "warp_per_item:<for_kernel.cu_" + std::to_string(z_loop) + ">=8");
  EXPECT_EQ(z.exit_code, 0) << z.output;
}

// One group size per launch, no loop split inside a split loop, and no
// coarsening (which remakes the same index line): each said when the patch
// is validated.
TEST_F(WarpPerItemFamily, PatchesThatCannotHoldTheirEditsTogetherAreRejected) {
  const gi::Seed seed = gi::load_seed(gi::test::source_dir() / "seeds/tools/voxel_to_node_gradient");
  const std::string x = std::to_string(gi::test::last_rule_line_holding(seed, "for (int x = xFirst; x <= xLast; x++)"));
  const std::string z = std::to_string(gi::test::last_rule_line_holding(seed, "for (int z = zFirst; z <= zLast; z++)"));
  auto rejection = [&](const std::string& patch) {
    try {
      gi::grammar::validate_patch(seed.grammar, gi::grammar::parse_patch(patch), seed.context);
    } catch (const gi::grammar::PatchError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(rejection("warp_per_item:<for_kernel.cu_" + z + ">=8 warp_per_item:<for_kernel.cu_" + x + ">=8")
                .find("may not lie one inside the other"),
            std::string::npos);
  EXPECT_NE(rejection("warp_per_item:<for_kernel.cu_" + x + ">=8 warp_per_item:<for_kernel.cu_" + x + ">=32")
                .find("must share the group size (8 and 32)"),
            std::string::npos);
  EXPECT_NE(rejection("coarsen:2 warp_per_item:<for_kernel.cu_" + x + ">=8").find("remake the global index"),
            std::string::npos);
  EXPECT_EQ(rejection("warp_per_item:<for_kernel.cu_" + x + ">=16"), "accepted");
  EXPECT_NE(rejection("warp_per_item:<for_kernel.cu_" + x + ">=12").find("4, 8, 16 or 32"), std::string::npos);
}

// Ties on purpose: the scores floorf(2x) of uniform(-1, 1) values take four
// values, so a row's first and last column with the maximum differ. With
// `>` the seed keeps the first, with `>=` the last; the combine must pick the
// same, and a combine that breaks ties the other way fails the check. The
// value from before the loop ties too when the scores are capped at it: `>=`
// replaces it by the last iteration that equals it, so it must come before
// every iteration (a sentinel after them all fails).
TEST_F(WarpPerItemFamily, ARecordsTiesGoToTheIterationTheSeedsComparisonKeeps) {
  std::string spec = gi::read_text_file(kUser / "row_sum/spec.json");
  spec.replace(spec.find("\"row_sum\""), 9, "\"row_max\"");
  struct Case {
    const char *op, *initial, *score, *right, *wrong;
  };
  const std::string floor = "floorf(matrix[row * cols + column] * 2.0f)";
  const Case cases[] = {
      {">", "-5.0f", "", "gi_their_at < gi_at_best", "gi_their_at > gi_at_best"},
      {">=", "-5.0f", "", "gi_their_at > gi_at_best", "gi_their_at < gi_at_best"},
      {">=", "0.0f", "fminf", "-2147483647 - 1;", "2147483647;"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const fs::path dir = dir_ / "user" / ("row_max_" + std::to_string(++n));
    fs::create_directories(dir);
    std::ofstream(dir / "spec.json") << spec;
    std::ofstream(dir / "kernel.cu")
        << "extern \"C\" __global__ void row_max(const float* matrix, int rows, int cols, float* sums) {\n"
           "    const int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (row >= rows) return;\n"
           "    float best = " << c.initial << ";\n"
           "    int at = -1;\n"
           "    for (int column = 0; column < cols; column++) {\n"
           "        const float score = " << (*c.score ? std::string(c.score) + "(" + floor + ", 0.0f)" : floor) << ";\n"
           "        if (score " << c.op << " best) {\n"
           "            best = score;\n"
           "            at = column;\n"
           "        }\n"
           "    }\n"
           "    sums[row] = (float)at;\n"
           "}\n";
    const gi::Seed seed = gi::load_seed(dir);
    const gi::grammar::Patch patch = gi::grammar::parse_patch("warp_per_item:<for_kernel.cu_6>=8");
    gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(seed.grammar, patch, seed.context);
    EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::Ok) << c.op << "\n" << variant.source;
    const std::size_t at = variant.source.find(c.right);
    ASSERT_NE(at, std::string::npos) << variant.source;
    variant.source.replace(at, std::string(c.right).size(), c.wrong);
    EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::WrongOutput) << c.op << " " << c.wrong;
  }
}

// The library's block matching at its default switch (the plain path): the
// displacement nest collapsed and shared by 32 lanes passes its checks; the
// record's position left out of the combine does not; the loops of four
// literal iterations are no candidates.
TEST_F(WarpPerItemFamily, TheLibrarysBlockMatchingPassesItsChecksWithItsDisplacementsShared) {
  const fs::path dir = gi::test::source_dir() / "seeds/blockmatching/ncc_block_matching";
  const gi::Seed seed = gi::load_seed(dir);
  const int k_loop = gi::test::last_rule_line_holding(seed, "for (int k = -searchRadius; k <= searchRadius; k++)");
  const std::string edit = "warp_per_item:<for_kernel.cu_" + std::to_string(k_loop) + ">=32";
  const auto candidates = gi::grammar::edit_family("warp_per_item").candidates(seed.grammar, seed.context);
  // k, j and i; the two passes' 3 x 3 loops of 4 voxels are left out.
  EXPECT_EQ(candidates.size(), 3 * seed.context.warp_group_sizes.size());
  const auto run = emulate(dir, edit);
  EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
  EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch(edit), seed.context);
  compiles(variant.source, edit);
  const std::size_t at = variant.source.find("result.x = gi_other_result_x;");
  ASSERT_NE(at, std::string::npos) << variant.source;
  variant.source.erase(at, std::string("result.x = gi_other_result_x;").size());
  EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::WrongOutput);
}

// The grid grows by the group size; a block that a group would straddle is refused.
TEST(WarpPerItemLaunch, GridGrowsByTheGroupSizeAndBlocksMustHoldWholeGroups) {
  const gi::fitness::KernelSpec spec = gi::fitness::load_kernel_spec(kUser / "row_sum");
  gi::fitness::LaunchPlan plan;
  const std::map<std::string, double> vars = {{"rows", 1003}, {"cols", 37}};
  gi::grammar::LaunchEffect effect;
  gi::fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.grid[0], 8u);  // ceil(1003 / 128)
  effect.group = 32;
  gi::fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.grid[0], 256u);  // 8 * 32: 128 / 32 rows per block
  EXPECT_EQ(gi::grammar::to_string(effect), ";group=32");
  EXPECT_THROW(gi::fitness::set_launch_geometry(plan, spec, vars, 48, effect), std::runtime_error);
  // 78,125,000 blocks of 64, times 32: beyond the grid limit.
  EXPECT_THROW(gi::fitness::set_launch_geometry(plan, spec, {{"rows", 5e9}, {"cols", 1}}, 64, effect),
               std::runtime_error);
}

// Few, large, independent edits: the first generation holds each of them;
// the voxel kernel's loops nest, so no patch shares them all at once.
TEST_F(WarpPerItemFamily, GpsFirstGenerationHoldsEveryWarpPerItemEdit) {
  for (const fs::path& dir : {kUser / "row_sum", gi::test::source_dir() / "seeds/tools/voxel_to_node_gradient"}) {
    const gi::Seed seed = gi::load_seed(dir);
    gi::OperatorConfig config;
    config.context = seed.context;
    const gi::EditOperators ops(seed.grammar, config);
    gi::SearchConfig c;
    // Half of it is room for voxel_to_node's 3 switch settings, its 6 loop
    // edits and the 3 `registers` edits the families take turns with.
    c.population = 24;
    std::mt19937_64 rng(3);
    const auto first = gi::make_search(c, ops)->propose(gi::SearchState{}, rng);
    for (const auto& e : gi::grammar::edit_family("warp_per_item").candidates(seed.grammar, seed.context))
      EXPECT_NE(std::find(first.begin(), first.end(), gi::grammar::Patch{{e}}), first.end()) << gi::grammar::to_string(e);
    for (const auto& p : first) EXPECT_NO_THROW(gi::grammar::validate_patch(seed.grammar, p, seed.context)) << gi::grammar::to_string(p);
  }
}

}  // namespace

namespace {

// A compensated (Kahan) sum down each column, read through a texture object,
// with the index over blocks numbered across a 2-D grid: the shape of
// NiftyReg's joint-histogram marginalisation (written here for the test).
const char* kKahanColumns =
    "__global__ void column_sums(float* totals, cudaTextureObject_t values, int rows, int columns) {\n"
    "  const int col = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;\n"
    "  if (col < columns) {\n"
    "    float total = tex1Dfetch<float>(values, col);\n"
    "    float carry = 0.0f, term, next;\n"
    "    for (int r = 1; r < rows; ++r) {\n"
    "      term = tex1Dfetch<float>(values, r * columns + col) - carry;\n"
    "      next = total + term;\n"
    "      carry = (next - total) - term;\n"
    "      total = next;\n"
    "    }\n"
    "    totals[col] = total;\n"
    "  }\n"
    "}\n";

}  // namespace

// The loop is a site: the flattened index is the global index, a texture
// fetch only reads, and the compensated sum is two sums (total, carry) with
// term and next temporaries. Broken, the pattern is refused.
TEST(WarpPerItemSites, ACompensatedSumOverAFlattenedGridIsASite) {
  const auto k = gi::grammar::parse_kernel(kKahanColumns, "kernel.cu");
  const auto found = gi::analysis::find_warp_per_item_sites(k);
  ASSERT_EQ(found.sites.size(), 1u) << (found.refusals.empty() ? "" : found.refusals[0]);
  const auto& s = found.sites[0];
  EXPECT_EQ(line_of(k, s.loop), 6);
  EXPECT_TRUE(s.index_flattened);
  ASSERT_EQ(s.sums.size(), 2u);
  EXPECT_EQ(s.sums[0].name, "total");
  EXPECT_EQ(s.sums[1].name, "carry");
  // The compensation added instead of subtracted is no Kahan sum: the running total is then carried.
  std::string broken = kKahanColumns;
  broken.replace(broken.find("(next - total) - term"), 21, "(next - total) + term");
  EXPECT_NE(refusal(broken).find("total is carried from one iteration to the next and is no sum"), std::string::npos)
      << refusal(broken);
}

// Shared by 8 or 32 lanes, the variant keeps the block number of the
// flattened index, combines both sums, and gives the seed's result in the
// emulator (the spec drafted by gi init).
TEST_F(WarpPerItemFamily, ACompensatedColumnSumSharedByLanesGivesTheSeedsResult) {
  const fs::path root = fs::temp_directory_path() / ("gi-wpi-kahan-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "column_sums.cu") << kKahanColumns;
  const fs::path seed = root / "user/column_sums";
  const gi::test::CommandOutput init = gi::test::run_gi("init \"" + (root / "column_sums.cu").string() + "\" --out \"" +
                                                        seed.string() + "\" --size rows=64 --size columns=1000");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  for (const char* edit : {"warp_per_item:<for_kernel.cu_6>=8", "warp_per_item:<for_kernel.cu_6>=32"}) {
    const gi::Seed s = gi::load_seed(seed);
    const gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(s.grammar, gi::grammar::parse_patch(edit), s.context);
    EXPECT_NE(variant.source.find("const int col = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x / "),
              std::string::npos) << variant.source;
    EXPECT_NE(variant.source.find("carry += __shfl_xor_sync"), std::string::npos) << variant.source;
    compiles(variant.source, edit);
    const auto run = emulate(seed, edit);
    EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
    EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  }
  fs::remove_all(root);
}

namespace {

// C++17 as the newest NiftyReg writes it: the item's coordinates from a
// template helper, bound by a structured binding before the loop.
const char* const kBoundCoordinates =
    "template <bool wrap> __device__ int2 RowCol(int i, int w) { return make_int2(i / w, wrap ? i % w : 0); }\n"
    "__global__ void weighted_rows(const float* img, float* out, int rows, int cols) {\n"
    "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (tid < rows) {\n"
    "    const auto [r, c] = RowCol<true>(tid, 7);\n"
    "    float s = 0.f;\n"
    "    for (int k = 0; k < cols; ++k) {\n"
    "      s += img[tid * cols + k] * (float)(r + c);\n"
    "    }\n"
    "    out[tid] = s;\n"
    "  }\n"
    "}\n";

}  // namespace

// The binding's names are the item's (the same in every lane of a group),
// and the template helper's body is its instance's: the loop is a site, and
// its variants give the seed's result in the emulator.
TEST_F(WarpPerItemFamily, AStructuredBindingFromATemplateHelperBeforeTheLoopIsNoObstacle) {
  const auto found = sites(kBoundCoordinates);
  ASSERT_EQ(found.sites.size(), 1u) << (found.refusals.empty() ? "" : found.refusals[0]);
  const fs::path root = fs::temp_directory_path() / ("gi-wpi-binding-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "weighted_rows.cu") << kBoundCoordinates;
  const fs::path seed = root / "user/weighted_rows";
  const gi::test::CommandOutput init = gi::test::run_gi("init \"" + (root / "weighted_rows.cu").string() + "\" --out \"" +
                                                        seed.string() + "\" --size rows=1000 --size cols=64");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  for (const char* edit : {"warp_per_item:<for_kernel.cu_7>=8", "warp_per_item:<for_kernel.cu_7>=32"}) {
    const gi::Seed s = gi::load_seed(seed);
    const gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(s.grammar, gi::grammar::parse_patch(edit), s.context);
    compiles(variant.source, edit);
    const auto run = emulate(seed, edit);
    EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
    EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  }
  fs::remove_all(root);
}
