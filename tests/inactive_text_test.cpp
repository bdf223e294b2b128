// Inactive text (grammar/inactive_text.hpp): a branch the preprocessor never
// takes (`#if 0`) holds prose a user keeps there (`don't`, a backtick, '@')
// and code that need not balance (a loop header it never closes: a nested
// '{' swallowed the #endif, "#endif without a matching #if in this block").
// It is one inactive comment: kept byte for byte, no rule, no edit, no
// scope; the taken branch of a conditional decided by constants is plain
// code, and mutants of such a kernel compile with NVRTC.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "fitness/emulation/cpu_emulator.hpp"
#include "gi/search/mutant_survey.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/grammar.hpp"
#include "grammar/kernel_structure.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "grammar/switches.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;
using grammar::Grammar;
using grammar::RuleKind;
using grammar::SourceError;

// Lines 4-9: `#if 0` with prose and an unclosed loop, in a kernel's body.
const std::string kInBody = R"(__global__ void twice(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if 0
The first version. Don't use it: it's wrong at `n` = 0 and @ the borders,
and it opens a loop it never closes:
    for (int k = 0; k < n; ++k) {
        out[k] = in[k] * 3.0f
#endif
    if (i >= n)
        return;
    out[i] = in[i] * 2.0f;
}
)";

// Lines 1-3: notes at file scope.
const std::string kAtFileScope = R"(#if 0
Notes: this kernel doesn't check n == 0 (that's the caller's job). `TODO` @me
#endif
__global__ void twice(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 2.0f;
}
)";

// The taken #else branch opens the loop the inactive branch also opens.
const std::string kElse = R"(__global__ void sum_rows(const float* in, float* out, int n)
{
    int row = blockIdx.x;
    float acc = 0.0f;
#if 0
    for (int k = n - 1; k >= 0; --k) {  // backwards: didn't help
#else
    for (int k = 0; k < n; ++k) {
#endif
        acc += in[row * n + k];
    }
    out[row] = acc;
}
)";

// `#if 0 ... #elif X`: decided when compiled after all.
const std::string kElif = R"(__global__ void twice(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
#if 0
    out[i] = in[i] * 3.0f  // didn't compile: no ';'
#elif defined(FAST_PATH)
    out[i] = in[i] + in[i];
#else
    out[i] = 2.0f * in[i];
#endif
}
)";

const grammar::Rule& rule_at_line(const Grammar& g, int line) {
  for (const auto& r : g.rules())
    if (r.first_line <= line && line <= r.last_line) return r;
  throw std::runtime_error("no rule covers line " + std::to_string(line));
}

// Every rule that reaches into lines [first, last] is one fixed rule, and no
// legal edit of any family names a rule there (as target or as the copied
// line).
void expect_no_edit_reaches(const Grammar& g, int first, int last) {
  const auto inside = [&](const grammar::Rule& r) { return r.first_line <= last && r.last_line >= first; };
  for (const auto& r : g.rules()) {
    if (inside(r)) {
      EXPECT_EQ(r.kind, RuleKind::Fixed) << r.text;
    }
  }
  std::size_t edits = 0;
  for (const grammar::EditFamily* family : grammar::edit_families())
    for (const grammar::Edit& e : family->candidates(g, {})) {
      ++edits;
      for (const std::string& name : {e.target, e.source}) {
        if (const auto i = g.find(name)) {
          EXPECT_FALSE(inside(g.rule(*i))) << grammar::to_string(e);
        }
      }
    }
  EXPECT_GT(edits, 0u) << "the live code has edits";
}

std::string error_of(const std::string& source) {
  try {
    Grammar::from_source(source, "k.cu");
  } catch (const SourceError& e) {
    return e.what();
  }
  return "parsed";
}

TEST(InactiveText, IfZeroInAKernelBodyIsOneInactiveCommentAndTheRestParses) {
  const Grammar g = Grammar::from_source(kInBody, "k.cu");
  EXPECT_EQ(g.source(), kInBody);
  const auto& tokens = g.parsed().tokens;
  const auto inactive = std::find_if(tokens.begin(), tokens.end(), [](const auto& t) { return t.inactive; });
  ASSERT_NE(inactive, tokens.end());
  EXPECT_EQ(inactive->kind, grammar::TokenKind::Comment);
  EXPECT_EQ(inactive->line, 4);
  EXPECT_EQ(inactive->end_line, 9);
  EXPECT_EQ(inactive->text, kInBody.substr(kInBody.find("#if 0"), kInBody.find("#endif") + 6 - kInBody.find("#if 0")));
  EXPECT_EQ(std::count_if(tokens.begin(), tokens.end(), [](const auto& t) { return t.inactive; }), 1);
  const grammar::Rule& dead = rule_at_line(g, 4);
  EXPECT_EQ(dead.first_line, 4);
  EXPECT_EQ(dead.last_line, 9);
  EXPECT_EQ(rule_at_line(g, 12).kind, RuleKind::Statement);  // after it: plain code
  EXPECT_EQ(rule_at_line(g, 10).kind, RuleKind::If);
  expect_no_edit_reaches(g, 4, 9);
}

TEST(InactiveText, IfZeroAtFileScopeParses) {
  const Grammar g = Grammar::from_source(kAtFileScope, "k.cu");
  EXPECT_EQ(rule_at_line(g, 1).last_line, 3);
  EXPECT_EQ(rule_at_line(g, 8).kind, RuleKind::Statement);
  expect_no_edit_reaches(g, 1, 3);
}

TEST(InactiveText, TheTakenElseBranchIsPlainCodeOfTheEnclosingBlock) {
  const Grammar g = Grammar::from_source(kElse, "k.cu");
  EXPECT_EQ(rule_at_line(g, 5).last_line, 7);  // #if 0 .. #else
  EXPECT_EQ(rule_at_line(g, 8).kind, RuleKind::For);
  EXPECT_EQ(rule_at_line(g, 9).kind, RuleKind::Fixed);  // #endif
  EXPECT_EQ(rule_at_line(g, 10).kind, RuleKind::Statement);
  // The loop's body stands in the loop, in the function: no #if branch.
  const auto& p = g.parsed();
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    if (g.rule(i).first_line == 10) {
      EXPECT_FALSE(p.blocks[g.context(i).block].branch);
    }
  }
  expect_no_edit_reaches(g, 5, 7);
  expect_no_edit_reaches(g, 9, 9);
}

TEST(InactiveText, AnElifThatReadsAMacroKeepsTheConditionalWithTheIfZeroBranchInactive) {
  const Grammar g = Grammar::from_source(kElif, "k.cu");
  EXPECT_EQ(rule_at_line(g, 6).text, "#if 0");  // opens the conditional
  EXPECT_EQ(rule_at_line(g, 7).first_line, 7);  // the inactive branch alone
  EXPECT_EQ(rule_at_line(g, 7).last_line, 7);
  EXPECT_EQ(rule_at_line(g, 9).kind, RuleKind::Statement);
  EXPECT_EQ(rule_at_line(g, 11).kind, RuleKind::Statement);
  const auto& p = g.parsed();
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    if (g.rule(i).first_line == 9 || g.rule(i).first_line == 11) {
      EXPECT_TRUE(p.blocks[g.context(i).block].branch);
    }
  }
  expect_no_edit_reaches(g, 6, 7);  // nor a copy inserted after `#if 0`, into the inactive branch
}

// Nested conditionals are counted, a directive inside a comment is none,
// and an apostrophe, as a quote, hides what follows it on its line.
TEST(InactiveText, NestedConditionalsCommentsAndQuotesAreReadAsThePreprocessorDoes) {
  const std::string src = R"(#if 0
#if 1
it's nested
#else
#endif
/* #endif in a comment ends nothing
*/
"a string with /* in it"
don't /* open a comment after an apostrophe
#elif 0
#endif
__global__ void k(float* out) { out[0] = 1.0f; }
#if 1
__device__ float one() { return 1.0f; }
#else
this branch isn't taken either
#endif
)";
  const Grammar g = Grammar::from_source(src, "k.cu");
  EXPECT_EQ(rule_at_line(g, 1).last_line, 11);
  EXPECT_EQ(rule_at_line(g, 12).first_line, 12);
  EXPECT_EQ(rule_at_line(g, 13).kind, RuleKind::Fixed);  // #if 1
  EXPECT_EQ(rule_at_line(g, 15).last_line, 17);           // #else .. #endif
  EXPECT_EQ(g.parsed().functions.size(), 2u);
}

// Switch resolution (what is published) decides the conditionals over
// switches and keeps `#if 0` as it is, an #elif over another macro too.
TEST(InactiveText, SwitchResolutionKeepsIfZeroAsItIs) {
  const std::string src =
      "#define PATH 1\n#if 0\ndon't\n#elif defined(X)\nint x;\n#endif\n#if PATH == 1\nint one;\n#else\nint two;\n"
      "#endif\n";
  EXPECT_EQ(grammar::resolve_switches(src, {{"PATH", "1"}}), "#if 0\ndon't\n#elif defined(X)\nint x;\n#endif\nint one;\n");
}

TEST(InactiveText, AnUnterminatedCommentInInactiveTextIsAnError) {
  const std::string e = error_of("#if 0\nsome text\n/* never closed\n#endif\n__global__ void k() {}\n");
  EXPECT_NE(e.find("k.cu:3:1: unterminated comment"), std::string::npos) << e;
}

TEST(InactiveText, DirectivesWithoutTheirIfOrEndifStayRefused) {
  std::string e = error_of("__global__ void k(float* a) {\n  a[0] = 1.f;\n#endif\n}\n");
  EXPECT_NE(e.find("k.cu:3:1: #endif without a matching #if in this block"), std::string::npos) << e;
  e = error_of("__global__ void k(float* a) {\n#if 0\n  don't\n}\n");
  EXPECT_NE(e.find("k.cu:2:1: #if opened here is never closed: expected #endif"), std::string::npos) << e;
  e = error_of("__global__ void k(float* a) {\n#if 0\n#else\n  a[0] = 1.f;\n}\n");
  EXPECT_NE(e.find("k.cu:2:1: #if opened here is never closed: expected #endif"), std::string::npos) << e;
  e = error_of("#if 1\n__global__ void k(float* a) {\n  a[0] = 1.f;\n}\n");
  EXPECT_NE(e.find("k.cu:1:1: #if opened here is never closed: expected #endif"), std::string::npos) << e;
  e = error_of("__global__ void k(float* a) {\n#if 0\n#if 1\n#endif\n}\n");
  EXPECT_NE(e.find("k.cu:2:1: #if opened here is never closed"), std::string::npos) << e;
  // A conditional a macro decides: each path must close its braces, as before.
  e = error_of("__global__ void k(float* a, int n) {\n#if X\n  if (n > 0) {\n#else\n  if (n > 1) {\n#endif\n"
               "    a[0] = 1.f;\n  }\n}\n");
  EXPECT_NE(e.find("k.cu:4:1: #else without a matching #if in this block"), std::string::npos) << e;
}

TEST(InactiveText, ThePatchedSourceKeepsTheInactiveTextByteForByte) {
  const Grammar g = Grammar::from_source(kInBody, "k.cu");
  const grammar::Patch patch = grammar::parse_patch("<_k.cu_12>");
  std::string expected = kInBody;
  const std::string write = "    out[i] = in[i] * 2.0f;\n";
  expected.erase(expected.find(write), write.size());
  EXPECT_EQ(grammar::apply_patch(g, patch), expected);
}

// The directives of host code are blanked for NVRTC: its inactive text too.
TEST(InactiveText, AHeadersHostCodeIsBlankedWithItsInactiveText) {
  const std::string header =
      "void host_setup() {\n#if 0\ndon't\n#elif defined(VERBOSE)\n  report();\n#endif\n}\n"
      "__device__ float twice(float x) { return 2.0f * x; }\n";
  EXPECT_EQ(grammar::header_device_view(header, "h.cuh", {}),
            "\n\n\n\n\n\n\n__device__ float twice(float x) { return 2.0f * x; }\n");
}

class InactiveTextSeed : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(root); }
  Seed seed_of(const std::string& source) const {
    fs::create_directories(root);
    std::ofstream(root / "kernel.cu") << source;
    return load_seed(root / "kernel.cu");
  }
  const fs::path root = fs::temp_directory_path() / ("gi-inactive-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

// NVRTC compiles the seed and its mutants: the inactive text reaches it as
// it is, and no edit breaks it.
TEST_F(InactiveTextSeed, MutantsOfKernelsWithInactiveTextCompile) {
  for (const std::string& source : {kInBody, kAtFileScope, kElse, kElif}) {
    const Seed seed = seed_of(source);
    SurveyConfig config;
    config.count = 40;
    config.seed = 2026;
    config.jobs = 2;
    config.operators.context = seed.context;
    const SurveyResult r = survey_mutants(seed, config);
    EXPECT_TRUE(r.seed_compiles);
    EXPECT_EQ(r.total, 40);
    EXPECT_GE(r.rate(), 0.95) << source << r.to_json().dump(2);
  }
}

// g++ behind the CUDA-on-CPU prelude skips the inactive text as NVRTC does.
TEST(InactiveText, TheCpuEmulatorBuildsKernelsWithInactiveText) {
  const fitness::CpuEmulator emulator;
  for (const std::string& source : {kInBody, kAtFileScope}) {
    const fitness::EmulatedKernel k = emulator.load(source, "twice");
    EXPECT_TRUE(k.ok()) << k.error;
  }
}

TEST_F(InactiveTextSeed, GiGrammarPrintsTheRulesOfAKernelWithIfZero) {
  (void)seed_of(kInBody);
  const test::CommandOutput r = test::run_gi("grammar \"" + (root / "kernel.cu").string() + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("<_kernel.cu_12>"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("<_kernel.cu_8>"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gi
