// factor (grammar/edits/factor.cpp, analysis/factor_sites.*): a loop's sums
// take out the factors the loop does not change and apply them once after
// it. Checked here: the rewrite (partials shared, divisions, dead weight
// lines dropped), what counts as a factor the loop does not change, each
// refusal with its reason and the loops that are silently no site, the line
// edits a factored patch refuses, the rule against warp_per_item on the same
// nest, and (CPU emulator) that library kernels give the seed's results
// factored while a variant that forgets a factor fails.
#include <gtest/gtest.h>

#include "analysis/factor_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "family_test_fixture.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

// A 2-D tensor product: weights on a line of their own, two sums sharing
// x[a] * v, a division by a parameter.
const std::string kKernel =
    "extern \"C\" __global__ void tensor(const float* in, int n, float h, float* out) {\n"
    "    int tid;\n"
    "    float xw[2];\n"
    "    float yw[2];\n"
    "    float w;\n"
    "    float s;\n"
    "    float t;\n"
    "    float v;\n"
    "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (tid < n) {\n"
    "        xw[0] = 0.25f; xw[1] = 0.75f;\n"
    "        yw[0] = 0.5f; yw[1] = 0.5f;\n"
    "        s = 0.0f;\n"
    "        t = 0.0f;\n"
    "        for (int b = 0; b < 2; b++) {\n"
    "            for (int a = 0; a < 2; a++) {\n"
    "                v = in[(tid + a + b) % n];\n"
    "                w = xw[a] * yw[b];\n"
    "                s += w * v;\n"
    "                t -= xw[a] * v / h;\n"
    "            }\n"
    "        }\n"
    "        out[tid] = s + t;\n"
    "    }\n"
    "}\n";

std::string problem(const std::string& source, const std::string& patch) {
  return edit_problem(Grammar::from_source(source, "k.cu"), parse_patch(patch).edits[0]).value_or("legal");
}

using test::replaced;

std::vector<std::string> sites(const std::string& source) {
  const Grammar g = Grammar::from_source(source, "k.cu");
  std::vector<std::string> out;
  for (const Edit& e : edit_family("factor").candidates(g, EditContext{})) out.push_back(to_string(e));
  return out;
}

std::vector<std::string> refusals(const std::string& source) {
  return edit_family("factor").refusals(Grammar::from_source(source, "k.cu"), EditContext{});
}

TEST(Factor, TheLoopSumsWhatChangesAndTheRestMultipliesOnceAfterIt) {
  EXPECT_EQ(sites(kKernel), std::vector<std::string>{"factor:<for_k.cu_16>"});
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  EXPECT_EQ(apply_patch(g, parse_patch("factor:<for_k.cu_16>")),
            "extern \"C\" __global__ void tensor(const float* in, int n, float h, float* out) {\n"
            "    int tid;\n"
            "    float xw[2];\n"
            "    float yw[2];\n"
            "    float w;\n"
            "    float s;\n"
            "    float t;\n"
            "    float v;\n"
            "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (tid < n) {\n"
            "        xw[0] = 0.25f; xw[1] = 0.75f;\n"
            "        yw[0] = 0.5f; yw[1] = 0.5f;\n"
            "        s = 0.0f;\n"
            "        t = 0.0f;\n"
            "        for (int b = 0; b < 2; b++) {\n"
            "            {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply "
            "each sum once after it\n"
            "                float gi_factor_16_0 = 0.0f;  // xw[a] * v\n"
            "                for (int a = 0; a < 2; a++) {\n"
            "                    v = in[(tid + a + b) % n];\n"
            "                    gi_factor_16_0 += xw[a] * v;\n"
            "                    // gi factor: t takes its sum from gi_factor_16_0\n"
            "                }\n"
            "                s += gi_factor_16_0 * yw[b];\n"
            "                t -= gi_factor_16_0 / h;\n"
            "            }\n"
            "        }\n"
            "        out[tid] = s + t;\n"
            "    }\n"
            "}\n");
}

TEST(Factor, AWeightStaysWhereTheFunctionReadsItElsewhere) {
  const std::string reread = replaced(kKernel, "        out[tid] = s + t;\n", "        out[tid] = s + t + w;\n");
  const std::string variant = apply_patch(Grammar::from_source(reread, "k.cu"), parse_patch("factor:<for_k.cu_16>"));
  EXPECT_NE(variant.find("                    w = xw[a] * yw[b];\n"), std::string::npos) << variant;
  EXPECT_NE(variant.find("s += gi_factor_16_0 * yw[b];"), std::string::npos) << variant;
}

// The library's kernels set one weight anew before each group of sums, and
// sum into the components of a float4: the assignment that reaches each
// sum is the one read through, and every line of the weight goes.
TEST(Factor, AWeightSetAnewForEachGroupOfSumsIsReadThroughTheOneThatReachesIt) {
  const std::string anew = replaced(replaced(replaced(replaced(kKernel, "    float s;\n", "    float4 s;\n"), "s = 0.0f;", "s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);"), "s += w * v;\n",
                                             "s.x += w * v;\n                w = xw[a] * h;\n                s.y += w * v;\n"),
                                    "out[tid] = s + t;", "out[tid] = s.x + s.y + t;");
  const std::string variant = apply_patch(Grammar::from_source(anew, "k.cu"), parse_patch("factor:<for_k.cu_16>"));
  EXPECT_EQ(variant.find("w = "), std::string::npos) << variant;
  EXPECT_NE(variant.find("s.x += gi_factor_16_0 * yw[b];"), std::string::npos) << variant;
  EXPECT_NE(variant.find("s.y += gi_factor_16_0 * h;"), std::string::npos) << variant;
  EXPECT_NE(variant.find("t -= gi_factor_16_0 / h;"), std::string::npos) << variant;
}

TEST(Factor, OnlyFactorsTheLoopCannotChangeMoveOut) {
  // yw read through a pointer: memory the loop might write, so it stays inside; nothing is left to move.
  const std::string pointer = replaced(replaced(kKernel, "const float* in,", "const float* in, const float* yp,"),
                                       "w = xw[a] * yw[b];", "w = xw[a] * yp[b];");
  const std::string no_move = replaced(pointer, "t -= xw[a] * v / h;", "t -= xw[a] * v;");
  EXPECT_TRUE(sites(no_move).empty());
  // Every reduction loop is such a loop: no refusal listed, the reason given to an edit that names it.
  EXPECT_TRUE(refusals(no_move).empty());
  EXPECT_EQ(problem(no_move, "factor:<for_k.cu_16>"), "no factor site: line 16: no sum in the loop has a factor the loop does not change");
  // A call (even of a pure function) or a name the loop assigns keeps a factor inside.
  const std::string call = replaced(no_move, "yp[b]", "sqrtf(h)");
  EXPECT_TRUE(sites(call).empty());
  const std::string assigned = replaced(replaced(no_move, "yp[b]", "h"), "                v = in[", "                h = h * 0.5f;\n                v = in[");
  EXPECT_TRUE(sites(assigned).empty());
  // A weight set twice, or whose names change between its line and the sum, is one factor that changes.
  const std::string twice = replaced(kKernel, "                s += w * v;\n", "                w = w * 1.0f;\n                s += w * v;\n");
  EXPECT_EQ(apply_patch(Grammar::from_source(twice, "k.cu"), parse_patch("factor:<for_k.cu_16>")).find("s += gi_factor_16_1 * yw[b]"),
            std::string::npos);
  // A double sum gets a double partial.
  const std::string twin = replaced(replaced(kKernel, "    float s;\n", "    double s;\n"), "float* out", "double* out");
  EXPECT_NE(apply_patch(Grammar::from_source(twin, "k.cu"), parse_patch("factor:<for_k.cu_16>")).find("double gi_factor_16_0 = 0.0;  // xw[a] * v"),
            std::string::npos);
}

TEST(Factor, RefusedWithTheReasonOrSilentlyNoSite) {
  EXPECT_EQ(problem(replaced(kKernel, "                v = in[", "                if (n < 0) return;\n                v = in["),
                    "factor:<for_k.cu_16>"),
            "no factor site: line 16: line 17 leaves the loop with return");
  EXPECT_EQ(problem(replaced(kKernel, "                v = in[(tid + a + b) % n];", "                v = in[(tid + a + b) % n] + s;"),
                    "factor:<for_k.cu_16>"),
            "no factor site: line 16: line 19: s is read or written elsewhere in the loop");
  const std::string moving = replaced(replaced(kKernel, "    float s;\n", "    float s[2];\n"), "                s += w * v;", "                s[a] += w * v;");
  EXPECT_NE(problem(moving, "factor:<for_k.cu_16>").find("the index of s[a] changes in the loop"), std::string::npos)
      << problem(moving, "factor:<for_k.cu_16>");
  // Two sums on one line: the rewrite replaces a sum's line.
  const std::string shared = replaced(kKernel, "                s += w * v;\n                t -= xw[a] * v / h;\n",
                                      "                s += w * v; t -= xw[a] * v / h;\n");
  EXPECT_EQ(problem(shared, "factor:<for_k.cu_16>"), "no factor site: line 19 holds more than the sum s");
  // The outer loop of a nest, integer sums, sums under an if: neither sites nor refusals.
  EXPECT_TRUE(refusals(kKernel).empty());
  const std::string guarded = replaced(replaced(kKernel, "                s += w * v;\n", "                if (v > 0.0f) {\n                    s += w * v;\n                }\n"),
                                       "                t -= xw[a] * v / h;\n", "");
  EXPECT_TRUE(sites(guarded).empty());
  EXPECT_TRUE(refusals(guarded).empty());
  // An if that sets a value the sum reads is fine: the sum stands at the loop's top.
  const std::string padded = replaced(kKernel, "                v = in[(tid + a + b) % n];\n",
                                      "                if (a < n) {\n                    v = in[(tid + a + b) % n];\n                } else {\n                    v = 0.0f;\n                }\n");
  EXPECT_EQ(problem(padded, "factor:<for_k.cu_16>"), "legal");
  EXPECT_EQ(problem(kKernel, "factor:<for_k.cu_15>"), "<for_k.cu_15> is no innermost for loop with a float sum at its top (or lies on a switch path the seed's default "
            "setting leaves out)");
}

TEST(Factor, LineEditsThatWouldUndoItAreRefused) {
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  EXPECT_NO_THROW(validate_patch(g, parse_patch("factor:<for_k.cu_16> <_k.cu_11>+<_k.cu_13>")));
  EXPECT_NO_THROW(validate_patch(g, parse_patch("<fixed_k.cu_21>+<_k.cu_23>")));
  const std::pair<std::string, std::string> refused[] = {
      {"factor:<for_k.cu_16> <_k.cu_19>", "changes line 19, which factor:<for_k.cu_16> reads"},  // a sum deleted
      {"factor:<for_k.cu_16> <_k.cu_18><_k.cu_13>", "changes line 18"},                          // the weight's line replaced
      {"factor:<for_k.cu_16> <_k.cu_17>+<_k.cu_13>", "copies a line naming s into the loop"},     // s named inside the loop
      // s read after the loop but before the sums are complete
      {"factor:<for_k.cu_16> <fixed_k.cu_21>+<_k.cu_23>", "copies a line naming s into the loop"}};
  for (const auto& [patch, why] : refused) {
    try {
      validate_patch(g, parse_patch(patch));
      ADD_FAILURE() << patch << " was accepted";
    } catch (const PatchError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << patch << ": " << e.what();
    }
  }
  // A copied line's names are its code's: a comment that names a sum is no reason to refuse.
  const std::string commented = replaced(kKernel, "threadIdx.x;\n", "threadIdx.x;  // s and t start below\n");
  EXPECT_NO_THROW(validate_patch(Grammar::from_source(commented, "k.cu"),
                                 parse_patch("factor:<for_k.cu_16> <_k.cu_17>+<_k.cu_9>")));
}

TEST(Factor, DoesNotComposeWithWarpPerItemOnTheSameNest) {
  const std::string row =
      "extern \"C\" __global__ void rows(const float* m, int n, int cols, float g, float* out) {\n"
      "    int tid;\n"
      "    float s;\n"
      "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    if (tid < n) {\n"
      "        s = 0.0f;\n"
      "        for (int c = 0; c < cols; c++) {\n"
      "            s += g * m[tid * cols + c];\n"
      "        }\n"
      "        out[tid] = s;\n"
      "    }\n"
      "}\n";
  const Grammar g = Grammar::from_source(row, "k.cu");
  EXPECT_NO_THROW(validate_patch(g, parse_patch("factor:<for_k.cu_7>")));
  EXPECT_NO_THROW(validate_patch(g, parse_patch("warp_per_item:<for_k.cu_7>=8")));
  for (const char* patch : {"factor:<for_k.cu_7> warp_per_item:<for_k.cu_7>=8", "warp_per_item:<for_k.cu_7>=8 factor:<for_k.cu_7>"}) {
    try {
      validate_patch(g, parse_patch(patch));
      ADD_FAILURE() << patch << " was accepted";
    } catch (const PatchError& e) {
      EXPECT_NE(std::string(e.what()).find("factor and warp_per_item do not compose"), std::string::npos) << e.what();
    }
  }
}

class FactorFamily : public test::FamilyTest {};

// Library kernels with a site: a B-spline Jacobian (weights on lines of
// their own, six partials for nine sums), the folding correction (its loop
// inside an if inside three loops), the bending energy (one weight set
// anew for each of six float4 sums), the cubic resampling (an if/else in
// the loop) and the composition of deformations.
TEST_F(FactorFamily, LibraryKernelsGiveTheSeedsResultsFactored) {
  for (const char* seed : {"bspline/jacobian_voxels", "bspline/folding_correction", "bspline/bending_energy",
                           "resampling/cubic_bspline", "deformation/compose"}) {
    const gi::Seed s = gi::load_seed(test::source_dir() / "seeds" / seed);
    const auto candidates = edit_family("factor").candidates(s.grammar, s.context);
    ASSERT_EQ(candidates.size(), 1u) << seed;
    const auto run = emulate(test::source_dir() / "seeds" / seed, to_string(candidates[0]));
    EXPECT_EQ(run.exit_code, 0) << seed << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << seed << "\n" << run.output;
  }
}

TEST_F(FactorFamily, AVariantThatForgetsAFactorFails) {
  const gi::Seed seed = gi::load_seed(test::source_dir() / "seeds/bspline/jacobian_voxels");
  PatchedKernel variant = patch_kernel(seed.grammar, parse_patch("factor:<for_kernel.cu_79>"), seed.context);
  compiles(variant.source, "factor:<for_kernel.cu_79>");
  EXPECT_EQ(status_of(seed, variant), fitness::RunStatus::Ok);
  PatchedKernel forgot = variant;
  forgot.source = replaced(forgot.source, "jacobian[4] += gi_factor_79_3 * (yDerivative[b] * zBasis[c]);",
                           "jacobian[4] += gi_factor_79_3 * zBasis[c];");
  EXPECT_EQ(status_of(seed, forgot), fitness::RunStatus::WrongOutput);
}

}  // namespace
}  // namespace gi::grammar
