// Patch text form, application to the seed, and the unified diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "gi/search/edit_operators.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

Grammar sample() { return Grammar::from_source(test::sample_source(), "sample.cu"); }

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

TEST(PatchText, RoundTripOfEveryEditType) {
  const std::string text =
      "<_k.cu_42> <_k.cu_42><_k.cu_7> <_k.cu_42>+<_k.cu_7> <IF_k.cu_3><IF_k.cu_9> unroll:<for_k.cu_40>=4 "
      "unroll:<for_k.cu_40>=-1 ldg:<_k.cu_42> fastmath:<_k.cu_5> restrict:input launch_bounds:256,2 "
      "launch_bounds:128 const:spacing=5 const:scale=0.5f";
  const Patch p = parse_patch(text);
  ASSERT_EQ(p.edits.size(), 13u);
  EXPECT_EQ(p.edits[0].family, "delete");
  EXPECT_EQ(p.edits[1].family, "replace");
  EXPECT_EQ(p.edits[2].family, "insert");
  EXPECT_EQ(p.edits[5].value, -1);
  EXPECT_EQ(p.edits[9].value2, 2);
  EXPECT_EQ(p.edits[10].value2, 0);
  EXPECT_EQ(p.edits[12].literal, "0.5f");
  EXPECT_EQ(to_string(p), text);
  EXPECT_EQ(parse_patch(to_string(p)), p);
}

TEST(PatchText, WhitespaceNewlinesAndCommentsAreAllowed) {
  const Patch p = parse_patch("# evolved on an H200\n<_k.cu_1>\n\n  <_k.cu_2>+<_k.cu_3>\t\n");
  ASSERT_EQ(p.edits.size(), 2u);
  EXPECT_TRUE(parse_patch("").edits.empty());
}

TEST(PatchApply, DeleteReplaceInsertOnTheSample) {
  const Grammar g = sample();
  const std::string out = apply_patch(g, parse_patch("<_sample.cu_20> <_sample.cu_27><_sample.cu_25> <_sample.cu_16>+<_sample.cu_20>"));
  const auto lines = lines_of(out);
  const auto seed = lines_of(g.source());
  // Line 16 is followed by the inserted copy of line 20 at the same indentation.
  EXPECT_EQ(lines[15], seed[15]);
  EXPECT_EQ(lines[16], "  sum = 0.f;");
  // Line 20 deleted: the pragma follows line 19's closing brace (now shifted by the insert).
  EXPECT_EQ(lines[19], "  }");
  EXPECT_EQ(lines[20], "#pragma unroll 4");
  // Line 27 replaced by line 25's statement, re-indented to line 27's level.
  EXPECT_NE(out.find("    } else if (idx >= n) {\n      idx = 0;\n"), std::string::npos);
  EXPECT_EQ(lines.size(), seed.size());  // one line deleted, one inserted
}

TEST(PatchApply, DeletingABracelessBodyLeavesAnEmptyStatement) {
  const Grammar g = sample();
  const std::string out = apply_patch(g, parse_patch("<_sample.cu_35>"));
  EXPECT_NE(out.find("  if (sum > 1.f)\n    ;\n  else\n"), std::string::npos);
}

TEST(PatchApply, SubRuleReplacementsChangeOnlyTheSubRule) {
  const Grammar g = sample();
  const std::string out = apply_patch(g, parse_patch("<IF_sample.cu_24><IF_sample.cu_26> <type_sample.cu_15><type_sample.cu_15>"));
  EXPECT_NE(out.find("    if (idx >= n) {\n      idx = 0;"), std::string::npos);
}

TEST(PatchApply, CudaEditFamilies) {
  const Grammar g = sample();
  const std::string out = apply_patch(
      g, parse_patch("unroll:<for_sample.cu_22>=2 unroll:<for_sample.cu_32>=-1 ldg:<_sample.cu_29> restrict:output "
                     "launch_bounds:128,4 const:n=1000 const:scale=2"));
  EXPECT_NE(out.find("#pragma unroll 2\n  for (int k"), std::string::npos);
  EXPECT_EQ(out.find("#pragma unroll 4"), std::string::npos);  // the seed's pragma is taken over
  EXPECT_NE(out.find("#pragma unroll\n  for (int j"), std::string::npos);
  EXPECT_NE(out.find("__ldg(&input[idx])"), std::string::npos);
  EXPECT_NE(out.find("float* __restrict__ output"), std::string::npos);
  EXPECT_NE(out.find("__launch_bounds__(128, 4) sample_kernel("), std::string::npos);
  EXPECT_NE(out.find("int n_unspecialised"), std::string::npos);
  EXPECT_NE(out.find("constexpr int n = 1000;"), std::string::npos);
  EXPECT_NE(out.find("constexpr float scale = 2.0f;"), std::string::npos);
  // Writes through c_weights-style globals and the output are never __ldg'd.
  EXPECT_EQ(out.find("__ldg(&output"), std::string::npos);
}

// Real code writes the star by the name (`float *p`) or with no space at
// all; the qualifier must stay apart from the name either way.
TEST(PatchApply, RestrictKeepsItsQualifierApartFromTheName) {
  const std::string src =
      "__global__ void k(float *a, const float*b, float * c, float* d) {\n  a[0] = b[0] + c[0] + d[0];\n}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  const std::string out = apply_patch(g, parse_patch("restrict:a restrict:b restrict:c restrict:d"));
  EXPECT_NE(out.find("float * __restrict__ a, const float* __restrict__ b, float * __restrict__ c, float* __restrict__ d"),
            std::string::npos)
      << out;
}

TEST(PatchApply, FastMathRewritesCallsOnly) {
  const std::string src = "__global__ void k(float* o, float expf_scale) {\n  o[0] = expf(o[1]) + powf(o[2], 2.f) + expf_scale;\n}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  const std::string out = apply_patch(g, parse_patch("fastmath:<_k.cu_2>"));
  EXPECT_NE(out.find("o[0] = __expf(o[1]) + __powf(o[2], 2.f) + expf_scale;"), std::string::npos);
}

TEST(PatchApply, IllegalEditsAreRejectedWithTheEditNamed) {
  const Grammar g = sample();
  const auto problem = [&](const std::string& text) {
    try {
      apply_patch(g, parse_patch(text));
    } catch (const PatchError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(problem("<_sample.cu_999>").find("unknown rule <_sample.cu_999>"), std::string::npos);
  EXPECT_NE(problem("<decl_sample.cu_14>").find("fixed structure"), std::string::npos);
  EXPECT_NE(problem("<_sample.cu_16> <for_sample.cu_22>").find("edit 2"), std::string::npos);
  EXPECT_NE(problem("<_sample.cu_16><IF_sample.cu_17>").find("rule types differ"), std::string::npos);
  EXPECT_NE(problem("const:input=3").find("not a scalar"), std::string::npos);
  EXPECT_NE(problem("const:n=2.5").find("not a int literal"), std::string::npos);
  EXPECT_NE(problem("restrict:n").find("not a pointer"), std::string::npos);
  EXPECT_NE(problem("launch_bounds:4096").find("1..1024"), std::string::npos);
  EXPECT_NE(problem("ldg:<_sample.cu_16>").find("no ldg site"), std::string::npos);
  EXPECT_NE(problem("unroll:<_sample.cu_16>=2").find("not a for loop"), std::string::npos);
}

TEST(PatchDiff, PatchMinusP1AppliesTheDiffForRandomPatches) {
  const auto seed = load_seed(test::seed_dirs()[0]);
  EditOperators ops(seed.grammar, OperatorConfig{});
  std::mt19937_64 rng(7);
  const auto dir = std::filesystem::temp_directory_path() / ("gi_patch_test_" + std::to_string(::getpid()));
  for (int trial = 0; trial < 20; ++trial) {
    Patch p;
    for (int k = 0; k < 1 + trial % 5; ++k) p.edits.push_back(ops.random_edit(rng));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "seeds/k");
    std::ofstream(dir / "seeds/k/kernel.cu") << seed.source;
    std::ofstream(dir / "change.diff") << patch_diff(seed.grammar, p, "seeds/k/kernel.cu");
    const std::string cmd = "patch -s -p1 --fuzz=0 -d " + dir.string() + " < " + (dir / "change.diff").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << to_string(p);
    EXPECT_EQ(read_text_file(dir / "seeds/k/kernel.cu"), apply_patch(seed.grammar, p)) << to_string(p);
  }
  std::filesystem::remove_all(dir);
}

TEST(PatchDiff, EmptyPatchGivesEmptyDiffAndTheSeed) {
  const Grammar g = sample();
  EXPECT_EQ(apply_patch(g, Patch{}), g.source());
  EXPECT_EQ(patch_diff(g, Patch{}, "x/sample.cu"), "");
}

}  // namespace
}  // namespace gi::grammar
