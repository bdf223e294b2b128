// Inputs the fuzz targets (fuzz/) found, minimised, fed through the same
// path as the target that found them: each must now give a clean SourceError
// or PatchError, or succeed. fuzz/README.md logs each finding.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "grammar/edit_rules.hpp"
#include "grammar/grammar.hpp"
#include "grammar/grammar_text.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

std::string source_error_of(auto&& call) {
  try {
    call();
  } catch (const SourceError& e) {
    return e.what();
  }
  return "";
}

std::string patch_error_of(const Grammar& g, const std::string& patch_text) {
  try {
    apply_patch(g, parse_patch(patch_text));
  } catch (const PatchError& e) {
    return e.what();
  }
  return "";
}

// fuzz_grammar: `t = t; b[0] = t;` is one rule (two statements on a line)
// whose first statement is the brace-less body of `else`. Copied over the
// brace-less body of the `if`, only `t = t;` stayed in the if: `b[0] = t;`
// fell between the if and its else, and the patched kernel did not parse.
TEST(FuzzRegression, BracelessBodyIsReplacedBySingleStatementsOnly) {
  const std::string src =
      "__global__ void k(float* b, float t) {\n"  // 1
      "  if (t > 0.f)\n"                          // 2
      "    t = 1.f;\n"                            // 3
      "  else\n"                                  // 4
      "    t = t; b[0] = t;\n"                    // 5
      "  b[1] = t;\n"                             // 6
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  const std::size_t body = *g.find("<_k.cu_3>");
  const std::size_t pair = *g.find("<_k.cu_5>");
  ASSERT_TRUE(g.context(body).braceless_body);
  ASSERT_EQ(g.context(pair).statements, 2);
  EXPECT_FALSE(can_replace_statement(g, body, pair));
  EXPECT_NE(patch_error_of(g, "<_k.cu_3><_k.cu_5>").find("brace-less body"), std::string::npos);
  // One statement may still replace the body, and the two-statement rule may
  // still go where no header owns it.
  EXPECT_EQ(patch_error_of(g, "<_k.cu_3><_k.cu_6>"), "");
  EXPECT_EQ(patch_error_of(g, "<_k.cu_6><_k.cu_5>"), "");
  // What fuzz_grammar checks: every legal replacement parses again.
  for (std::size_t t = 0; t < g.rules().size(); ++t)
    for (std::size_t s = 0; s < g.rules().size(); ++s) {
      if (!can_replace_statement(g, t, s)) continue;
      Edit e;
      e.family = "replace";
      e.target = g.rule_name(t);
      e.source = g.rule_name(s);
      const Patch p{{e}};
      EXPECT_NO_THROW(Grammar::from_source(apply_patch(g, p), "patched.cu")) << to_string(p);
    }
}

// fuzz_grammar (minimised): `(};` passed as a statement because only the
// count of brackets was checked, and `t[};` after the body's end (as the
// brace count saw it) escaped the parameter scan; the legal patch
// <_a.cu_2><_a.cu_4> moved `t[}` into the body, where the scan's strict
// bracket match failed, so the patched kernel did not parse.
TEST(FuzzRegression, StatementBracketsMustNest) {
  const std::string error = source_error_of([] { Grammar::from_source("a(*t){\n(};\n\nt[};}", "a.cu"); });
  EXPECT_NE(error.find("a.cu:2:1: '(' opened here is never closed: expected ')' before '}' at line 2"),
            std::string::npos)
      << error;
  EXPECT_NE(source_error_of([] { Grammar::from_source("__global__ void k(int* a) {\n  a[0 } = 1;\n}\n", "k.cu"); })
                .find("k.cu:2:4: '[' opened here is never closed: expected ']' before '}'"),
            std::string::npos);
  EXPECT_NO_THROW(Grammar::from_source("__global__ void k(int* a) {\n  a[(0)] = {1}[0];\n}\n", "k.cu"));
}

// fuzz_grammar: `gi grammar --json` failed with nlohmann's "invalid UTF-8
// byte" on a kernel with a Latin-1 comment; it now prints U+FFFD for it.
TEST(FuzzRegression, GrammarJsonOfNonUtf8Source) {
  const auto dir = std::filesystem::temp_directory_path() / "gi_fuzz_regression_json";
  std::filesystem::create_directories(dir);
  const auto file = dir / "latin1.cu";
  std::ofstream(file, std::ios::binary) << "// gr\xD9n\n__global__ void k(int* a) {\n  a[0] = 1;\n}\n";
  const std::string command = "\"" + test::gi_binary() + "\" grammar --json \"" + file.string() + "\" 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = pclose(pipe);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("gr\xEF\xBF\xBDn"), std::string::npos) << out;
}

// fuzz_bnf: the header's file name was read raw although to_bnf quotes it,
// so a name with '\' or '"' printed to a header that named another file.
TEST(FuzzRegression, BnfFileNameIsQuotedBothWays) {
  const std::string src = "__global__ void k(int* a) {\n  a[0] = 1;\n}\n";
  const Grammar g = Grammar::from_source(src, "dir\\k\"1\".cu");
  EXPECT_EQ(from_bnf(to_bnf(g)), g);
  // The raw spelling the fuzzer used is now an unknown escape.
  const std::string raw =
      "# gi-grammar 1 file=\"a\\b\" final-newline=1\n<start> ::= <fixed_a\\b_1>\n"
      "<fixed_a\\b_1> ::= \"__global__ void k(){}\"\n";
  EXPECT_NE(source_error_of([&] { from_bnf(raw, "raw.bnf"); }).find("unknown escape '\\b'"), std::string::npos);
}

// fuzz_bnf: rules used many times by rules used many times spelled a source
// of ~50 GB from 8 KB of text (out of memory). Each rule is used once now.
TEST(FuzzRegression, BnfRuleUsedTwiceIsRejected) {
  std::string text = "# gi-grammar 1 file=\"k\" final-newline=1\n<start> ::=";
  for (int i = 0; i < 200; ++i) text += " <a>";
  text += "\n<a> ::=";
  for (int i = 0; i < 800; ++i) text += " <b>";
  text += "\n<b> ::=";
  for (int i = 0; i < 800; ++i) text += " <c>";
  text += "\n<c> ::= \"" + std::string(400, 'x') + "\"\n";
  const std::string error = source_error_of([&] { from_bnf(text, "blowup.bnf"); });
  EXPECT_NE(error.find("blowup.bnf:4:1: rule <c> is used more than once (in <b>)"), std::string::npos) << error;
  // A sub-rule spelled twice is caught as well.
  const std::string twice =
      "# gi-grammar 1 file=\"k\" final-newline=1\n<start> ::= <fixed_k_1>\n"
      "<fixed_k_1> ::= <s> <s>\n<s> ::= \"x\"\n";
  EXPECT_NE(source_error_of([&] { from_bnf(twice, "twice.bnf"); }).find("rule <s> is used more than once"),
            std::string::npos);
}

// fuzz_patch: `launch_bounds:1,-3` printed as `launch_bounds:1` (min blocks
// printed only when positive), so the text form did not parse back.
TEST(FuzzRegression, NegativeLaunchBoundsPrintsBack) {
  const Patch p = parse_patch("launch_bounds:1,-3");
  EXPECT_EQ(to_string(p), "launch_bounds:1,-3");
  EXPECT_EQ(parse_patch(to_string(p)), p);
  EXPECT_EQ(to_string(parse_patch("launch_bounds:256,0")), "launch_bounds:256");
  const Grammar g = Grammar::from_source(test::sample_source(), "kernel.cu");
  EXPECT_NE(patch_error_of(g, "launch_bounds:1,-3").find("min blocks must be 0..32"), std::string::npos);
}

// fuzz_grammar: thousands of nested '{' overflowed the parser's stack.
TEST(FuzzRegression, DeepNestingIsAnError) {
  const std::string deep = "__global__ void k(int* a) {\n" + std::string(4000, '{') + std::string(4000, '}') + "\n}\n";
  const std::string error = source_error_of([&] { Grammar::from_source(deep, "deep.cu"); });
  EXPECT_NE(error.find("deep.cu:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("statements nest deeper than 1000 levels"), std::string::npos) << error;
  const std::string fine = "__global__ void k(int* a) {\n" + std::string(900, '{') + std::string(900, '}') + "\n}\n";
  EXPECT_NO_THROW(Grammar::from_source(fine, "fine.cu"));
}

// Found while writing fuzz_patch: from_chars reads "inf" and "nan", so
// `const:scale=inf` was accepted and gave `constexpr float scale = inff;`.
TEST(FuzzRegression, ConstantMustBeANumberLiteral) {
  const Grammar g = Grammar::from_source(test::sample_source(), "kernel.cu");
  for (const char* bad : {"inf", "-inf", "nan", "infinity"})
    EXPECT_NE(patch_error_of(g, std::string("const:scale=") + bad).find("is not a float literal"), std::string::npos)
        << bad;
  EXPECT_NE(apply_patch(g, parse_patch("const:scale=-.5")).find("constexpr float scale = -.5f;"), std::string::npos);
  EXPECT_NE(apply_patch(g, parse_patch("const:n=7")).find("constexpr int n = 7;"), std::string::npos);
}

// Found with the fuzz_grammar seed one_line_no_newline.cu: constant
// specialisation put its constexpr line after the header's rule, which for a
// kernel on one line is after the closing brace, outside the kernel.
TEST(FuzzRegression, ConstantOfOneLineKernelStaysInside) {
  const Grammar one = Grammar::from_source("__global__ void k(int *a, int n) { a[0] = n; }\n", "kernel.cu");
  EXPECT_EQ(apply_patch(one, parse_patch("const:n=3")),
            "__global__ void k(int *a, int n_unspecialised) { constexpr int n = 3; a[0] = n; }\n");
  const Grammar two = Grammar::from_source("__global__ void k(int *a, int n) {\n  a[0] = n;\n}\n", "kernel.cu");
  EXPECT_EQ(apply_patch(two, parse_patch("const:n=3")),
            "__global__ void k(int *a, int n_unspecialised) {\n  constexpr int n = 3;\n  a[0] = n;\n}\n");
}

// Found while writing fuzz_patch: the error for a short edit near the end
// of the text quoted [start, start + 40), an iterator past the end.
TEST(FuzzRegression, ShortBadEditAtEndIsQuotedWhole) {
  const std::string error = source_error_of([] { parse_patch("<_k.cu_1> unroll:<x", "p.gi"); });
  EXPECT_NE(error.find("p.gi:1:20: expected"), std::string::npos) << error;
  EXPECT_NE(error.find("in edit starting 'unroll:<x'"), std::string::npos) << error;
}

}  // namespace
}  // namespace gi::grammar
