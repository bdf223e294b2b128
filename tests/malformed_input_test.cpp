// Bad input gives an error naming file, line and what was expected - never a crash.
#include <gtest/gtest.h>

#include "grammar/grammar.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

void expect_source_error(const std::string& src, int line, const std::string& what) {
  try {
    Grammar::from_source(src, "bad.cu");
    ADD_FAILURE() << "accepted: " << src;
  } catch (const SourceError& e) {
    EXPECT_EQ(e.file(), "bad.cu");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(MalformedInput, UnterminatedComment) {
  expect_source_error("__global__ void k() {\n}\n/* never\nclosed\n", 3, "unterminated comment: expected '*/'");
}

// Bytes real files carry (found on public CUDA code): a NUL byte would make
// NVRTC stop reading there and every mutant "compile"; lone-CR line endings
// made the whole file one fixed rule with no word said.
TEST(MalformedInput, ANulByteAndLoneCrLineEndingsAreNamed) {
  expect_source_error(std::string("__global__ void k(int* a) {\n  // x \0 y\n  a[0] = 1;\n}\n", 40), 2,
                      "a NUL byte: NVRTC reads a source only up to its first NUL");
  expect_source_error("__global__ void k(int* a) {\r  a[0] = 1;\r}\r", 1, "lone CR");
  // CRLF is fine: every line is its own rule, each keeping its CR.
  const Grammar crlf = Grammar::from_source("__global__ void k(int* a) {\r\n  a[0] = 1;\r\n}\r\n", "ok.cu");
  EXPECT_EQ(crlf.rules().size(), 3u);
}

// Editors on Windows start a file with a UTF-8 byte-order mark, which NVRTC
// rejects ("unrecognized token"): the grammar starts after it.
TEST(MalformedInput, AByteOrderMarkIsSkippedAndLeftOutOfEveryVariant) {
  const Grammar g = Grammar::from_source("\xEF\xBB\xBF__global__ void k(int* a) {\n  a[0] = 1;\n}\n", "bom.cu");
  ASSERT_EQ(g.rules().size(), 3u);
  EXPECT_EQ(g.rule(0).text.rfind("__global__", 0), 0u) << g.rule(0).text;
  EXPECT_EQ(apply_patch(g, Patch{}).rfind("__global__", 0), 0u);
}

TEST(MalformedInput, UnbalancedBraces) {
  expect_source_error("__global__ void k(int* a) {\n  a[0] = 1;\n", 1, "never closed: expected '}'");
  expect_source_error("__global__ void k(int* a) {\n  a[0] = 1;\n}\n}\n", 4, "unmatched '}'");
  expect_source_error("__global__ void k(int* a) {\n  if (a[0] {\n  }\n}\n", 2, "never closed");
}

TEST(MalformedInput, EmptyAndNoFunction) {
  expect_source_error("", 1, "empty source");
  expect_source_error("   \n\n", 1, "empty source");
  expect_source_error("// only a comment\n", 1, "no function definition");
}

TEST(MalformedInput, MissingSemicolonAndStrayElse) {
  expect_source_error("__global__ void k(int* a) {\n  a[0] = 1\n}\n", 3, "expected ';'");
  expect_source_error("__global__ void k(int* a) {\n  else a[0] = 1;\n}\n", 2, "'else' without a matching 'if'");
  expect_source_error("__global__ void k(int* a) {\n  a[0] = 1;\n  if (a[1])\n}\n", 4, "expected a statement");
}

TEST(MalformedInput, StrayCharacterAndUnterminatedString) {
  expect_source_error("__global__ void k(int* a) {\n  a[0] = 1 @ 2;\n}\n", 2, "unexpected character '@'");
  expect_source_error("__global__ void k(char* a) {\n  a = \"abc;\n}\n", 2, "unterminated string literal");
}

TEST(MalformedInput, GarbagePatch) {
  for (const std::string text : {"garbage", "<_k.cu_1", "<_k.cu_1>+", "unroll:<for_k.cu_3>", "unroll:<for_k.cu_3>=x",
                                 "const:n", "launch_bounds:", "<_k.cu_1>&", "restrict:", "<a><b><c>+"}) {
    try {
      parse_patch(text, "p.gi");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const SourceError& e) {
      EXPECT_EQ(e.file(), "p.gi");
      EXPECT_EQ(e.line(), 1);
      EXPECT_GT(e.column(), 0);
      EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
    }
  }
}

TEST(MalformedInput, PatchErrorNamesLineAndColumn) {
  try {
    parse_patch("<_k.cu_1>\n  <_k.cu_2> ?", "p.gi");
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 13);
  }
}

TEST(MalformedInput, UnknownRulePatch) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  EXPECT_THROW(apply_patch(g, parse_patch("<_other.cu_3>")), PatchError);
  EXPECT_THROW(apply_patch(g, parse_patch("<_sample.cu_16>+<_sample.cu_4000>")), PatchError);
}

TEST(MalformedInput, MissingSeedFolder) {
  try {
    load_seed("/nonexistent/seed");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/seed/kernel.cu: no such file"), std::string::npos);
  }
}

}  // namespace
}  // namespace gi::grammar
