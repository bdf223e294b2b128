// Branch coverage of training data: the source rewrite
// (fitness/instrument/branch_coverage.hpp), the report over counts and exemptions
// (fitness/check/coverage_report.hpp, gi/library/seed_coverage.hpp, the verify README)
// and, on a GPU, exact counts of an instrumented kernel
// (GpuRunner::run_counted). The GPU tests skip without a CUDA device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>

#include "fitness/instrument/branch_coverage.hpp"
#include "fitness/check/coverage_report.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/library/seed_coverage.hpp"
#include "gi/library/seed_verification.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "grammar/source_error.hpp"
#include "grammar/token.hpp"
#include "test_support.hpp"

namespace {

using namespace gi::fitness;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> keys(const BranchInstrumentation& b) {
  std::vector<std::string> k;
  for (const BranchSite& s : b.sites) k.push_back(s.key);
  return k;
}

const BranchSite& site(const BranchInstrumentation& b, const std::string& key) {
  for (const BranchSite& s : b.sites)
    if (s.key == key) return s;
  throw std::runtime_error("no site " + key);
}

// The instrumented source after its preamble.
std::string body(const std::string& instrumented) {
  const std::size_t line = instrumented.find("\n#line 1 ");
  return instrumented.substr(instrumented.find('\n', line + 1) + 1);
}

// The body's tokens without any gi_branch(ID, ( ... )) wrapper: if the
// rewrite only wrapped conditions, these are exactly the original's tokens.
std::vector<std::string> unwrapped_tokens(const std::string& instrumented) {
  const auto tokens = gi::grammar::tokenize(body(instrumented), "instrumented");
  std::vector<bool> drop(tokens.size(), false);
  auto closing = [&](std::size_t open) {
    int depth = 0;
    for (std::size_t j = open; j < tokens.size(); ++j) {
      if (tokens[j].is("(")) ++depth;
      if (tokens[j].is(")") && --depth == 0) return j;
    }
    return tokens.size();
  };
  for (std::size_t i = 0; i + 4 < tokens.size(); ++i) {
    if (!tokens[i].is("gi_branch") || !tokens[i + 1].is("(") || tokens[i + 2].kind != gi::grammar::TokenKind::Number ||
        !tokens[i + 3].is(",") || !tokens[i + 4].is("("))
      continue;
    const std::size_t outer = closing(i + 1), inner = closing(i + 4);
    EXPECT_EQ(inner + 1, outer) << "gi_branch takes more than its parenthesised condition at token " << i;
    for (std::size_t j : {i, i + 1, i + 2, i + 3, i + 4, inner, outer})
      if (j < drop.size()) drop[j] = true;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (!drop[i]) out.push_back(tokens[i].text);
  return out;
}

std::vector<std::string> token_texts(const std::string& source) {
  std::vector<std::string> out;
  for (const auto& t : gi::grammar::tokenize(source, "original")) out.push_back(t.text);
  return out;
}

// Only wrappers added, lines kept (so keys and compiler messages name the
// seed's own lines), one gi_branch per site.
void expect_only_wrapped(const std::string& original, const BranchInstrumentation& b) {
  EXPECT_EQ(unwrapped_tokens(b.source), token_texts(original));
  const std::string rest = body(b.source);
  EXPECT_EQ(std::count(rest.begin(), rest.end(), '\n'), std::count(original.begin(), original.end(), '\n'));
  std::size_t calls = 0;
  for (std::size_t at = rest.find("gi_branch("); at != std::string::npos; at = rest.find("gi_branch(", at + 1)) ++calls;
  EXPECT_EQ(calls, b.sites.size());
  EXPECT_TRUE(contains(b.source, "gi_branch_counts[" + std::to_string(b.counters()) + "]")) << b.source;
}

// ---- the rewrite (CPU) ------------------------------------------------------------

TEST(BranchInstrument, KeysNameKindLineAndColumnOfTheFirstToken) {
  std::string source = "extern \"C\" __global__ void k(const float* in, float* out, int n) {\n";
  for (int line = 2; line < 35; ++line) source += "\n";
  source += "            if (X >= 0 && X < n) {\n"   // line 35, `if` at column 13
            "                out[X] = in[X];\n"
            "            }\n"
            "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"if@35:13", "op@35:17", "op@35:27"}));
  EXPECT_EQ(site(b, "if@35:13").text, "X >= 0 && X < n");
  EXPECT_EQ(site(b, "op@35:27").text, "X < n");
  EXPECT_EQ(site(b, "op@35:17").kind, BranchKind::Operand);
  EXPECT_EQ(site(b, "op@35:17").line, 35);
  EXPECT_EQ(site(b, "op@35:17").column, 17);
  EXPECT_EQ(site(b, "if@35:13").function, "k");
  EXPECT_TRUE(contains(b.source, "if (gi_branch(0, (gi_branch(1, (X >= 0)) && gi_branch(2, (X < n)))))")) << b.source;
  expect_only_wrapped(source, b);
}

// A file of several kernels (a user's, as gi init leaves it): with an entry,
// only that kernel and the helpers it calls, directly or through another
// helper, get counters; the other kernel and its helper none.
TEST(BranchInstrument, AnEntryCountsItsKernelAndWhatItCallsOnly) {
  const std::string source = "__device__ float inner(float v) { return v > 0.0f ? v : 0.0f; }\n"
                             "__device__ float outer(float v) { return inner(v) < 1.0f ? v : 1.0f; }\n"
                             "__device__ float other(float v) { return v < 0.0f ? -v : v; }\n"
                             "extern \"C\" __global__ void a(const float* in, float* out, int n) {\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) out[i] = outer(in[i]);\n"
                             "}\n"
                             "extern \"C\" __global__ void b(const float* in, float* out, int n) {\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) out[i] = other(in[i]);\n"
                             "}\n";
  std::vector<std::string> functions;
  for (const BranchSite& s : instrument_branches(source, "k.cu", "a").sites) functions.push_back(s.function);
  EXPECT_EQ(functions, (std::vector<std::string>{"inner", "outer", "a"}));
  EXPECT_EQ(instrument_branches(source, "k.cu").sites.size(), 5u);
  // A name that is no kernel of the file counts everything, as without one.
  EXPECT_EQ(instrument_branches(source, "k.cu", "missing").sites.size(), 5u);
}

// Overloads of one name (NiftyReg's GetSlidedValues(x, y) beside (x, y, z)):
// a call reaches those that take its number of arguments, defaults counted;
// where none does, every overload, as gi cannot tell which.
TEST(BranchInstrument, ACallReachesTheOverloadsThatTakeItsArguments) {
  const std::string source = "__device__ float slide(int x, int y) { return x < 0 ? 0.f : 1.f; }\n"
                             "__device__ float slide(int x, int y, int z) { return z < 0 ? 0.f : 2.f; }\n"
                             "__device__ float pick(int x, int y = 1) { return y < x ? 0.f : 3.f; }\n"
                             "__device__ float pick(int x, int y, int z, int w) { return w < 0 ? 0.f : 4.f; }\n"
                             "__global__ void a(float* out, int n) {\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) out[i] = slide(i, n) + pick(i);\n"
                             "}\n"
                             "__global__ void b(float* out, int n) {\n"
                             "    if (n > 0) out[0] = slide(1, 2, 3, 4, 5);\n"
                             "}\n";
  std::vector<std::string> lines;
  for (const BranchSite& s : instrument_branches(source, "k.cu", "a").sites) lines.push_back(std::to_string(s.line));
  EXPECT_EQ(lines, (std::vector<std::string>{"1", "3", "7"}));
  lines.clear();
  for (const BranchSite& s : instrument_branches(source, "k.cu", "b").sites) lines.push_back(std::to_string(s.line));
  EXPECT_EQ(lines, (std::vector<std::string>{"1", "2", "10"}));
}

TEST(BranchInstrument, IfElseIfChainHasOneSitePerIf) {
  const std::string source =
      "__global__ void k(int* out, int n) {\n"
      "    int i = threadIdx.x;\n"
      "    if (i < n) {\n"
      "        out[i] = 1;\n"
      "    } else if (i == n) {\n"
      "        out[0] = 2;\n"
      "    } else if (i > 2 * n)\n"
      "        out[1] = 3;\n"
      "    else {\n"
      "        out[2] = 4;\n"
      "    }\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"if@3:5", "if@5:12", "if@7:12"}));
  EXPECT_TRUE(contains(b.source, "} else if (gi_branch(1, (i == n))) {")) << b.source;
  EXPECT_TRUE(contains(b.source, "} else if (gi_branch(2, (i > 2 * n)))\n")) << b.source;
  expect_only_wrapped(source, b);
}

TEST(BranchInstrument, MixedAndOrGivesEveryOperandOfTheChain) {
  const std::string source =
      "__global__ void k(int* out, int a, int b, int c) {\n"
      "    out[0] = a || b && c;\n"
      "    out[1] = (a || b) && (c);\n"
      "    out[2] = !(a && (b || c)) || f(a, b) && c;\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"op@2:14", "op@2:19", "op@2:24",              // a, b, c
                                               "op@3:14", "op@3:15", "op@3:20", "op@3:26",   // (a || b), a, b, (c)
                                               "op@4:14", "op@4:16", "op@4:21", "op@4:22", "op@4:27",
                                               "op@4:34", "op@4:45"}));
  EXPECT_EQ(site(b, "op@3:14").text, "(a || b)");
  EXPECT_EQ(site(b, "op@4:14").text, "!(a && (b || c))");
  EXPECT_EQ(site(b, "op@4:34").text, "f(a, b)");
  EXPECT_TRUE(contains(b.source, "out[0] = gi_branch(0, (a)) || gi_branch(1, (b)) && gi_branch(2, (c));")) << b.source;
  // The wider operand encloses the narrower ones.
  EXPECT_TRUE(contains(b.source, "gi_branch(3, ((gi_branch(4, (a)) || gi_branch(5, (b))))) && gi_branch(6, ((c)))"))
      << b.source;
  expect_only_wrapped(source, b);
}

TEST(BranchInstrument, TernaryConditionsNestedInCallsCastsAndEachOther) {
  const std::string source =
      "__device__ float pick(float a, float b) { return a > b ? a : b; }\n"
      "__global__ void k(float* out, const float* in, int n, int m) {\n"
      "    int i = threadIdx.x;\n"
      "    float v = (float)i > 1.0f ? in[i] : 0.0f;\n"
      "    out[i] = pick(i < n ? in[i] : 0.0f, m ? 1.0f : 2.0f);\n"
      "    out[i] = i ? (m ? 1 : 2) : n ? 3 : 4;\n"
      "    out[i] = i && m ? v : -v;\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"?:@1:50", "?:@4:15", "?:@5:19", "?:@5:41", "?:@6:14", "?:@6:19",
                                               "?:@6:32", "op@7:14", "?:@7:14", "op@7:19"}));
  EXPECT_EQ(site(b, "?:@1:50").function, "pick");
  EXPECT_EQ(site(b, "?:@1:50").kind, BranchKind::Ternary);
  EXPECT_EQ(site(b, "?:@4:15").text, "(float)i > 1.0f");
  EXPECT_EQ(site(b, "?:@7:14").text, "i && m");
  EXPECT_TRUE(contains(b.source, "return gi_branch(0, (a > b)) ? a : b;")) << b.source;
  EXPECT_TRUE(contains(b.source, "pick(gi_branch(2, (i < n)) ? in[i] : 0.0f, gi_branch(3, (m)) ? 1.0f : 2.0f)"))
      << b.source;
  EXPECT_TRUE(contains(b.source, "gi_branch(4, (i)) ? (gi_branch(5, (m)) ? 1 : 2) : gi_branch(6, (n)) ? 3 : 4"))
      << b.source;
  EXPECT_TRUE(contains(b.source, "gi_branch(8, (gi_branch(7, (i)) && gi_branch(9, (m)))) ? v : -v")) << b.source;
  expect_only_wrapped(source, b);
}

TEST(BranchInstrument, LoopConditionsReturnsAndInitialisers) {
  const std::string source =
      "__device__ bool inside(int x, int n) {\n"
      "    return x >= 0 && x < n;\n"
      "}\n"
      "__global__ void k(float* out, int n, int m) {\n"
      "    int i = threadIdx.x;\n"
      "    bool ok = i < n || m > 0;\n"
      "    for (int j = 0; j < m && ok; j++) out[j] = 0;\n"
      "    while (i > 0 && inside(i, n)) i--;\n"
      "    do { i++; } while (i < 4 || i == 7);\n"
      "    out[0] = ok;\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"op@2:12", "op@2:22", "op@6:15", "op@6:24", "op@7:21", "op@7:30",
                                               "op@8:12", "op@8:21", "op@9:24", "op@9:33"}));
  EXPECT_EQ(site(b, "op@2:12").function, "inside");
  EXPECT_EQ(site(b, "op@7:30").function, "k");
  EXPECT_TRUE(contains(b.source, "for (int j = 0; gi_branch(4, (j < m)) && gi_branch(5, (ok)); j++)")) << b.source;
  EXPECT_TRUE(contains(b.source, "while (gi_branch(8, (i < 4)) || gi_branch(9, (i == 7)));")) << b.source;
  expect_only_wrapped(source, b);
}

TEST(BranchInstrument, CommentsStringsAndConstantExpressionsAreLeftAlone) {
  const std::string source =
      "// a comment with && and || and a ? b : c\n"
      "#define BOTH(a, b) ((a) && (b))\n"
      "__constant__ int table[2] = {1 && 1, 0 ? 1 : 2};\n"
      "__global__ void k(float* out, int n) {\n"
      "    constexpr bool wide = sizeof(float) > 2 && sizeof(int) > 2;\n"
      "    static __shared__ float cache[32 > 16 ? 32 : 16];\n"
      "    float w[4 > 2 ? 4 : 2];\n"
      "    const char* s = \"x && y || z ? 1 : 2\";\n"
      "    char c = '?';\n"
      "    int i = threadIdx.x; /* i && n ? */\n"
      "    if (i < n /* && not an operand */) out[i] = s[0] + c + w[0] + cache[0] + wide + BOTH(i, n);\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"if@11:5"}));
  EXPECT_EQ(site(b, "if@11:5").text, "i < n");
  EXPECT_TRUE(contains(b.source, "if (gi_branch(0, (i < n)) /* && not an operand */)")) << b.source;
  EXPECT_TRUE(contains(b.source, "\"x && y || z ? 1 : 2\"")) << b.source;
  expect_only_wrapped(source, b);
}

TEST(BranchInstrument, MultiLineConditionKeepsItsLinesAndCollapsesItsText) {
  const std::string source =
      "__global__ void k(float* out, int n, int m) {\n"
      "    int i = threadIdx.x;\n"
      "    if (i < n &&   // first\n"
      "        i < m) {\n"
      "        out[i] = 1;\n"
      "    }\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"if@3:5", "op@3:9", "op@4:9"}));
  EXPECT_EQ(site(b, "if@3:5").text, "i < n && // first i < m");
  EXPECT_TRUE(contains(b.source, "gi_branch(1, (i < n)) &&   // first\n        gi_branch(2, (i < m)))))")) << b.source;
  expect_only_wrapped(source, b);
}

TEST(BranchInstrument, InitStatementIsNotTheCondition) {
  const std::string source =
      "__global__ void k(int* out, int n) {\n"
      "    if (int j = n * 2; j > 4) out[0] = j;\n"
      "}\n";
  const BranchInstrumentation b = instrument_branches(source);
  EXPECT_EQ(keys(b), (std::vector<std::string>{"if@2:5"}));
  EXPECT_EQ(site(b, "if@2:5").text, "j > 4");
  EXPECT_TRUE(contains(b.source, "if (int j = n * 2; gi_branch(0, (j > 4)))")) << b.source;
}

TEST(BranchInstrument, WhatCannotBeRewrittenIsASourceErrorNamingWhere) {
  try {
    instrument_branches("__global__ void k(int* out) {\n    if (int j = out[0]) out[1] = j;\n}\n", "decl.cu");
    ADD_FAILURE() << "no error";
  } catch (const gi::grammar::SourceError& e) {
    EXPECT_EQ(e.file(), "decl.cu");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.what(), "declaration as an 'if' condition")) << e.what();
  }
  try {
    instrument_branches("__global__ void k(int* out, int n) {\n    if (n > 0 &&\n#if WIDE\n        n < 9\n#else\n"
                        "        n < 5\n#endif\n    ) out[0] = 1;\n}\n",
                        "pp.cu");
    ADD_FAILURE() << "no error";
  } catch (const gi::grammar::SourceError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(contains(e.what(), "preprocessor line inside it")) << e.what();
  }
  EXPECT_THROW(instrument_branches("__global__ void k( {\n"), gi::grammar::SourceError);
  EXPECT_THROW(instrument_branches("int x = 1;\n"), gi::grammar::SourceError);
}

TEST(BranchInstrument, NoSiteStillDefinesTheCounters) {
  const BranchInstrumentation b = instrument_branches("__global__ void k(int* out) {\n    out[0] = 1;\n}\n");
  EXPECT_TRUE(b.sites.empty());
  EXPECT_EQ(b.counters(), 2u);
  EXPECT_TRUE(contains(b.source, "__device__ unsigned long long gi_branch_counts[2];")) << b.source;
}

TEST(BranchInstrument, BranchKeysParseOnlyInTheirForm) {
  const auto k = parse_branch_key("?:@12:7");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, BranchKind::Ternary);
  EXPECT_EQ(k->line, 12);
  EXPECT_EQ(k->column, 7);
  EXPECT_EQ(parse_branch_key("op@1:1")->kind, BranchKind::Operand);
  EXPECT_EQ(parse_branch_key("if@3:5")->kind, BranchKind::If);
  for (const char* bad : {"", "if", "if@", "if@3", "if@3:", "if@:5", "if@0:5", "if@3:0", "if@-3:5", "IF@3:5",
                          "if@3:5 ", "for@3:5", "if@3:5:1", "if@1234567890:1"})
    EXPECT_FALSE(parse_branch_key(bad)) << bad;
}

// Every seed of the library instrumented: only wrappers added, and it
// compiles with NVRTC for sm_90, as do the hand-written samples above (one
// batch through the compile service, two jobs).
TEST(BranchInstrument, EverySeedInstrumentedCompiles) {
  std::vector<CompileRequest> requests;
  std::vector<std::string> names;
  std::size_t sites = 0;
  for (const auto& dir : gi::test::seed_dirs()) {
    SCOPED_TRACE(dir.string());
    const std::string source = gi::read_text_file(dir / "kernel.cu");
    const BranchInstrumentation b = instrument_branches(source, "kernel.cu");
    expect_only_wrapped(source, b);
    EXPECT_FALSE(b.sites.empty());  // every seed guards its threads
    sites += b.sites.size();
    CompileRequest r;
    r.source = b.source;
    r.options = gi::base_compile_options();
    requests.push_back(r);
    names.push_back(gi::test::seed_name(dir));
  }
  const std::string samples =
      "__device__ bool inside(int x, int n) { return x >= 0 && x < n; }\n"
      "struct Flag { __device__ explicit operator bool() const { return v != 0; } int v; };\n"
      "extern \"C\" __global__ void samples(float* out, const float* in, int n, int m) {\n"
      "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    const float* p = i < n ? in : nullptr;\n"
      "    Flag f{m};\n"
      "    if (p && f) out[i] = p[i];\n"          // a pointer and an explicit operator bool
      "    else if (i == n || (i > n && m)) out[0] = 1;\n"
      "    for (int j = 0; j < m && inside(j, n); j++) out[j] += (j & 1) ? 1.0f : 0.0f;\n"
      "}\n";
  CompileRequest r;
  r.source = instrument_branches(samples, "samples.cu").source;
  r.options = gi::base_compile_options();
  requests.push_back(r);
  names.push_back("samples.cu");
  Compiler compiler(std::nullopt);
  const auto results = compiler.compile_all(requests, 2);
  for (std::size_t i = 0; i < results.size(); ++i)
    EXPECT_TRUE(results[i].ok) << names[i] << ": " << results[i].error << "\n" << results[i].log;
  std::cout << "[ info ] " << names.size() - 1 << " seeds, " << sites << " branch sites\n";
  EXPECT_GE(names.size(), 31u);
}

// ---- the report (CPU) -----------------------------------------------------------

std::vector<BranchSite> two_sites() {
  return instrument_branches(
             "__global__ void k(int* out, int n) {\n"
             "    int i = threadIdx.x;\n"
             "    if (i < n) out[i] = i > 3 ? 1 : 0;\n"
             "}\n")
      .sites;  // if@3:5 and ?:@3:25
}

CoverageExemption exemption(const std::string& branch, bool direction, const std::string& reason,
                            const std::string& path = "coverage_exempt[0]") {
  return CoverageExemption{branch, direction, reason, path};
}

TEST(CoverageReport, DirectionsTakenPerWorkloadUntakenAndExempt) {
  const auto sites = two_sites();
  ASSERT_EQ(sites.size(), 2u);
  ASSERT_EQ(sites[1].key, "?:@3:25");
  // train takes if true and ?: true only; train:1 adds if false; ?: false nobody.
  const std::vector<std::vector<std::uint64_t>> counts = {{0, 1000, 0, 996}, {24, 4, 0, 3}};
  const CoverageReport r = coverage_report(sites, {"train", "train:1"}, counts, {}, "spec.json");
  ASSERT_EQ(r.directions.size(), 4u);
  EXPECT_EQ(r.directions[0].counts, (std::vector<std::uint64_t>{0, 24}));
  EXPECT_FALSE(r.directions[0].direction);
  EXPECT_TRUE(r.directions[1].direction);
  EXPECT_EQ(r.directions[1].total(), 1004u);
  EXPECT_TRUE(r.directions[0].taken());
  EXPECT_FALSE(r.directions[0].taken_by(0));
  EXPECT_TRUE(r.directions[0].taken_by(1));
  EXPECT_EQ(r.taken_by_timed(), 2u);
  EXPECT_EQ(r.taken(), 3u);
  EXPECT_EQ(r.exempt(), 0u);
  ASSERT_EQ(r.untaken().size(), 1u);
  EXPECT_EQ(r.name(*r.untaken()[0]), "?:@3:25 false");
  EXPECT_FALSE(r.passed());

  const CoverageReport exempted =
      coverage_report(sites, {"train", "train:1"}, counts, {exemption("?:@3:25", false, "i > 3 for every thread")},
                      "spec.json");
  EXPECT_TRUE(exempted.passed());
  EXPECT_EQ(exempted.exempt(), 1u);
  EXPECT_TRUE(exempted.untaken().empty());
  EXPECT_EQ(exempted.directions[2].exemption, "i > 3 for every thread");
  EXPECT_TRUE(exempted.notes.empty());
}

TEST(CoverageReport, StaleExemptionIsAnErrorNamingTheKey) {
  const auto sites = two_sites();
  const std::vector<std::vector<std::uint64_t>> counts = {{1, 1, 1, 1}};
  const CoverageReport r =
      coverage_report(sites, {"train"}, counts, {exemption("if@4:5", true, "moved", "coverage_exempt[3]")},
                      "seeds/x/y/spec.json");
  EXPECT_FALSE(r.passed());
  EXPECT_TRUE(r.untaken().empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_TRUE(contains(r.errors[0], "seeds/x/y/spec.json: coverage_exempt[3].branch: stale exemption: no branch "
                                    "site if@4:5"))
      << r.errors[0];
}

TEST(CoverageReport, ExemptionOfATakenDirectionIsANoteNotAFailure) {
  const CoverageReport r = coverage_report(two_sites(), {"train"}, {{1, 1, 1, 1}},
                                           {exemption("if@3:5", false, "padding")}, "spec.json");
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.exempt(), 0u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(contains(r.notes[0], "if@3:5 false is exempted but the training set takes it")) << r.notes[0];
}

TEST(CoverageReport, CountsThatDoNotFitTheSitesThrow) {
  EXPECT_THROW(coverage_report(two_sites(), {"train"}, {{1, 1, 1}}, {}, "s"), std::invalid_argument);
  EXPECT_THROW(coverage_report(two_sites(), {"train", "train:1"}, {{1, 1, 1, 1}}, {}, "s"), std::invalid_argument);
}

TEST(CoverageReport, JsonAndTableNameEveryDirection) {
  const CoverageReport r = coverage_report(two_sites(), {"train", "train:1"}, {{0, 1000, 0, 996}, {24, 4, 0, 3}},
                                           {exemption("if@3:5", false, "no padding threads")}, "spec.json");
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["directions"], 4);
  EXPECT_EQ(j["taken_by_train"], 2);
  EXPECT_EQ(j["taken"], 3);
  EXPECT_EQ(j["exempt"], 0);
  EXPECT_EQ(j["workloads"], nlohmann::json({"train", "train:1"}));
  ASSERT_EQ(j["untaken"].size(), 1u);
  EXPECT_EQ(j["untaken"][0]["branch"], "?:@3:25");
  EXPECT_EQ(j["untaken"][0]["direction"], "false");
  EXPECT_EQ(j["untaken"][0]["text"], "i > 3");
  EXPECT_EQ(j["sites"][0]["key"], "if@3:5");
  EXPECT_EQ(j["sites"][0]["kind"], "if");
  EXPECT_EQ(j["sites"][0]["false"]["counts"], nlohmann::json({0, 24}));
  EXPECT_EQ(j["sites"][0]["false"]["exempt"], "no padding threads");
  EXPECT_EQ(j["sites"][1]["true"]["taken"], true);
  EXPECT_EQ(j["notes"].size(), 1u);

  const std::string table = coverage_table(r);
  EXPECT_TRUE(contains(table, "branch   dir    train  train:1  status        source\n")) << table;
  EXPECT_TRUE(contains(table, "?:@3:25  false  0      0        UNTAKEN       i > 3\n")) << table;
  EXPECT_TRUE(contains(table, "if@3:5   false  0      24       taken+exempt  i < n\n    exempt because: no padding"))
      << table;
  EXPECT_TRUE(contains(table, "4 directions: 2 taken by train alone, 3 by the training set (2 workloads), 0 exempt, "
                              "1 untaken"))
      << table;
  EXPECT_TRUE(contains(table, "coverage FAILED")) << table;
}

// ---- a seed's coverage from its runs (CPU: the runs are made up) ------------------

gi::InstrumentedSeed instrumented_without_kernel() {
  gi::InstrumentedSeed s;
  s.instrumentation = instrument_branches(
      "__global__ void k(int* out, int n) {\n    int i = threadIdx.x;\n    if (i < n) out[i] = i > 3 ? 1 : 0;\n}\n");
  return s;
}

KernelSpec spec_with_checks(std::size_t checks) {
  KernelSpec spec;
  spec.display_path = "seeds/x/y/spec.json";
  spec.train_checks.resize(checks);
  return spec;
}

gi::CoverageRun counted(const std::string& workload, RunStatus status, std::vector<std::uint64_t> counts) {
  gi::CoverageRun r;
  r.workload = workload;
  r.run.check.status = status;
  if (status != RunStatus::Ok) r.run.check.message = "element 7: got 1, expected 2";
  r.run.counts = std::move(counts);
  return r;
}

TEST(SeedCoverage, RunsOfTheTrainingSetGiveTheReport) {
  const gi::SeedCoverage c =
      gi::seed_coverage(instrumented_without_kernel(), spec_with_checks(1),
                        {counted("train", RunStatus::Ok, {0, 9, 0, 9}), counted("train:1", RunStatus::Ok, {3, 0, 0, 0})});
  ASSERT_TRUE(c.report);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.failure(),
            "untaken branch directions (not exempt in the spec's coverage_exempt): ?:@3:25 false (i > 3)");
  const nlohmann::json j = gi::to_json(c);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["runs"][1]["workload"], "train:1");
  EXPECT_EQ(j["runs"][1]["status"], "ok");
  EXPECT_EQ(j["taken"], 3);

  const gi::SeedCoverage full =
      gi::seed_coverage(instrumented_without_kernel(), spec_with_checks(1),
                        {counted("train", RunStatus::Ok, {0, 9, 0, 9}), counted("train:1", RunStatus::Ok, {3, 0, 2, 0})});
  EXPECT_TRUE(full.passed());
  EXPECT_EQ(full.failure(), "");
}

TEST(SeedCoverage, AFailedOrMissingRunIsAnError) {
  const gi::SeedCoverage wrong = gi::seed_coverage(
      instrumented_without_kernel(), spec_with_checks(1),
      {counted("train", RunStatus::Ok, {1, 1, 1, 1}), counted("train:1", RunStatus::WrongOutput, {1, 1, 1, 1})});
  EXPECT_FALSE(wrong.passed());
  EXPECT_FALSE(wrong.report);
  EXPECT_TRUE(contains(wrong.error, "element 7: got 1, expected 2")) << wrong.error;
  EXPECT_EQ(gi::to_json(wrong)["runs"][1]["status"], "wrong_output");

  const gi::SeedCoverage missing = gi::seed_coverage(instrumented_without_kernel(), spec_with_checks(2),
                                                     {counted("train", RunStatus::Ok, {1, 1, 1, 1})});
  EXPECT_FALSE(missing.passed());
  EXPECT_TRUE(contains(missing.error, "coverage runs on 1 workloads, the training set has 3")) << missing.error;

  gi::InstrumentedSeed broken;
  broken.error = "cannot instrument the seed for coverage: kernel.cu:3:5: ...";
  const gi::SeedCoverage none = gi::seed_coverage(broken, spec_with_checks(0), {});
  EXPECT_FALSE(none.passed());
  EXPECT_EQ(none.failure(), broken.error);
  EXPECT_EQ(gi::to_json(none)["error"], broken.error);
}

TEST(SeedCoverage, VerifyReadmeHasACoverageSectionWithTheUntakenDirections) {
  const gi::SeedCoverage c =
      gi::seed_coverage(instrumented_without_kernel(), spec_with_checks(0), {counted("train", RunStatus::Ok, {0, 9, 0, 9})});
  const nlohmann::json result = {{"kernel", "tools/x"}, {"passed", false}, {"tolerance", {{"abs", 0}, {"rel", 0}}},
                                 {"workloads", nlohmann::json::array()}, {"coverage", gi::to_json(c)}};
  const nlohmann::json other = {{"kernel", "tools/y"}, {"passed", false}, {"tolerance", nlohmann::json::object()},
                                {"coverage", {{"passed", false}, {"error", "does not compile"}}}};
  const std::string readme = gi::verification_readme({{"gpu", "NVIDIA H200"}}, {result, other});
  EXPECT_TRUE(contains(readme, "## Branch coverage of the training set")) << readme;
  EXPECT_TRUE(contains(readme, "0 of 2 kernels measured have every direction taken or exempt")) << readme;
  EXPECT_TRUE(contains(readme, "| tools/x | 4 | 2 | 2 | 0 | 2 |")) << readme;
  EXPECT_TRUE(contains(readme, "| tools/y | - | - | - | - | - |")) << readme;
  EXPECT_TRUE(contains(readme, "- tools/x if@3:5 false: `i < n`")) << readme;
  EXPECT_TRUE(contains(readme, "- tools/x ?:@3:25 false: `i > 3`")) << readme;
  EXPECT_TRUE(contains(readme, "- tools/y: does not compile")) << readme;
}

// ---- the command line -------------------------------------------------------------

using gi::test::CommandOutput;
using gi::test::run_gi;

TEST(CoverageCommand, NamesAMissingSeedAndSaysNoCudaDeviceWithoutOne) {
  const CommandOutput missing = run_gi("coverage /no/such/seed");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "/no/such/seed")) << missing.output;
  if (probe_cuda().driver_ok && !probe_cuda().gpus.empty()) GTEST_SKIP() << "a CUDA device is present";
  const CommandOutput r = run_gi("coverage \"" + (gi::test::source_dir() / "seeds/tools/convolution_x").string() + "\"");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no CUDA device")) << r.output;
}

// ---- on the GPU -------------------------------------------------------------------

// A device helper called from two sites, an if/else-if chain with && whose
// second operand reads `in` only inside the buffer (short-circuiting kept),
// a loop condition with && and a ternary, across partly filled warps.
const char* kProbe = R"(__device__ int clampi(int v, int n) {
    return v < 0 ? 0 : (v >= n ? n - 1 : v);
}
extern "C" __global__ void probe(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] % 3 == 0) {
        out[i] = clampi(in[i] - 5, 100);
    } else if (i < n) {
        int s = 0;
        for (int j = 0; j < 4 && j <= in[i] % 3; j++) s += j;
        out[i] = s + clampi(-i, 7);
    }
}
extern "C" __global__ void busy(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = 0;
        for (int j = 0; j < 64 && s >= 0; j++) s += ((in[i] + j) & 1) ? 1 : 0;
        out[i] = s;
    }
}
)";

// The counts the probe kernel must give, by running its logic on the CPU.
std::map<std::string, std::array<std::uint64_t, 2>> probe_counts(int n, int threads) {
  std::map<std::string, std::array<std::uint64_t, 2>> c;
  auto count = [&](const char* key, bool v) {
    ++c[key][v ? 1 : 0];
    return v;
  };
  auto clampi = [&](int v, int m) {
    return count("?:@2:12", v < 0) ? 0 : (count("?:@2:25", v >= m) ? m - 1 : v);
  };
  for (int i = 0; i < threads; ++i) {
    const int in = i;
    const bool first = count("op@6:9", i < n) && count("op@6:18", in % 3 == 0);
    if (count("if@6:5", first)) {
      clampi(in - 5, 100);
    } else if (count("if@8:12", i < n)) {
      for (int j = 0; count("op@10:25", j < 4) && count("op@10:34", j <= in % 3); j++) {
      }
      clampi(-i, 7);
    }
  }
  return c;
}

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

LaunchPlan int_plan(const std::string& entry, int n, unsigned block, unsigned grid) {
  std::vector<int> in(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
  LaunchPlan p;
  p.entry = entry;
  p.buffers.push_back({"in", ParamRole::In, ElementType::I32, in.size(), bytes_of(in)});
  p.buffers.push_back({"out", ParamRole::Out, ElementType::I32, in.size(), {}});
  ScalarArg count{"n", std::vector<std::byte>(sizeof(int))};
  std::memcpy(count.bytes.data(), &n, sizeof(int));
  p.scalars.push_back(count);
  p.params = {{true, 0}, {true, 1}, {false, 0}};
  p.block = {block, 1, 1};
  p.grid = {grid, 1, 1};
  return p;
}

class CoverageGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!gpu_available()) return;
    runner_ = new gi::fitness::GpuRunner(0);
    instrumented_ = new BranchInstrumentation(instrument_branches(kProbe, "probe.cu"));
    Compiler compiler(std::nullopt);
    CompileRequest request;
    request.source = instrumented_->source;
    request.file_name = "probe.cu";
    request.arch = runner_->arch();
    const CompileResult compiled = compiler.compile(request);
    if (compiled.ok) cubin_ = new std::vector<char>(compiled.cubin);
    else compile_error_ = new std::string(compiled.error + "\n" + compiled.log);
    request.source = kProbe;  // the plain kernels: no counters
    const CompileResult plain = compiler.compile(request);
    if (plain.ok) plain_ = new std::vector<char>(plain.cubin);
  }
  static void TearDownTestSuite() {
    delete runner_;
    runner_ = nullptr;
  }
  static bool gpu_available() {
    static const CudaEnvironment env = probe_cuda();
    return env.driver_ok && !env.gpus.empty();
  }
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << probe_cuda().message;
    ASSERT_EQ(compile_error_, nullptr) << *compile_error_;
    ASSERT_NE(plain_, nullptr);
  }
  LoadedKernel load(const std::vector<char>& image, const std::string& entry) {
    LoadResult r = runner_->load(image, entry);
    EXPECT_TRUE(r.ok()) << r.message;
    return std::move(*r.kernel);
  }
  std::size_t index(const std::string& key) const {
    for (std::size_t i = 0; i < instrumented_->sites.size(); ++i)
      if (instrumented_->sites[i].key == key) return i;
    ADD_FAILURE() << "no site " << key;
    return 0;
  }

  static inline gi::fitness::GpuRunner* runner_ = nullptr;
  static inline BranchInstrumentation* instrumented_ = nullptr;
  static inline std::vector<char>* cubin_ = nullptr;
  static inline std::vector<char>* plain_ = nullptr;
  static inline std::string* compile_error_ = nullptr;
};

TEST_F(CoverageGpu, ExactCountsOfEveryDirectionAndTheRightOutput) {
  constexpr int n = 1000;
  const LaunchPlan p = int_plan("probe", n, 128, 8);  // 1024 threads: the last warp is partly past n
  ExpectedOutput e{"out", {}, std::nullopt, {}};
  for (int i = 0; i < n; ++i) {
    const int v = i - 5;
    e.values.push_back(i % 3 == 0 ? (v < 0 ? 0 : (v >= 100 ? 99 : v)) : (i % 3 == 1 ? 1 : 3));
  }
  const CountedRun r = runner_->run_counted(load(*cubin_, "probe"), p, {e}, Tolerance{0, 0}, kBranchCounterSymbol,
                                            instrumented_->counters());
  ASSERT_TRUE(r.check.ok()) << r.check.message;
  ASSERT_EQ(r.counts.size(), instrumented_->counters());
  const auto expected = probe_counts(n, 1024);
  std::vector<std::string> probe_keys;
  for (const BranchSite& s : instrumented_->sites)
    if (s.line <= 13) probe_keys.push_back(s.key);
  std::vector<std::string> mirrored;
  for (const auto& [key, counts] : expected) mirrored.push_back(key);
  std::sort(probe_keys.begin(), probe_keys.end());
  EXPECT_EQ(probe_keys, mirrored);  // the CPU mirror counts every site of probe
  for (const auto& [key, counts] : expected) {
    const std::size_t s = index(key);
    EXPECT_EQ(r.counts[2 * s], counts[0]) << key << " false";
    EXPECT_EQ(r.counts[2 * s + 1], counts[1]) << key << " true";
  }
  // A second run starts from zero again.
  const CountedRun again = runner_->run_counted(load(*cubin_, "probe"), p, {e}, Tolerance{0, 0}, kBranchCounterSymbol,
                                                instrumented_->counters());
  EXPECT_EQ(again.counts, r.counts);
}

TEST_F(CoverageGpu, TwoMillionThreadsWithALoopStayFast) {
  constexpr int n = (1 << 21) + 3;
  const LaunchPlan p = int_plan("busy", n, 256, (n + 255) / 256);
  ExpectedOutput e{"out", std::vector<double>(static_cast<std::size_t>(n), 32.0), std::nullopt, {}};
  const LoadedKernel k = load(*cubin_, "busy");
  runner_->run_counted(k, p, {e}, Tolerance{0, 0}, kBranchCounterSymbol, instrumented_->counters());  // warm-up
  const auto start = std::chrono::steady_clock::now();
  const CountedRun r = runner_->run_counted(k, p, {e}, Tolerance{0, 0}, kBranchCounterSymbol, instrumented_->counters());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ coverage ] 2M threads x 64 iterations, 4 sites: " << seconds * 1e3 << " ms per counted run\n";
  ASSERT_TRUE(r.check.ok()) << r.check.message;
  const std::uint64_t N = n, threads = static_cast<std::uint64_t>(p.grid[0]) * 256;
  auto at = [&](const std::string& key, bool direction) { return r.counts[2 * index(key) + (direction ? 1 : 0)]; };
  EXPECT_EQ(at("if@16:5", true), N);
  EXPECT_EQ(at("if@16:5", false), threads - N);
  EXPECT_EQ(at("op@18:25", true), 64 * N);
  EXPECT_EQ(at("op@18:25", false), N);
  EXPECT_EQ(at("op@18:35", true), 64 * N);
  EXPECT_EQ(at("op@18:35", false), 0u);
  EXPECT_EQ(at("?:@18:53", true), 32 * N);
  EXPECT_EQ(at("?:@18:53", false), 32 * N);
  EXPECT_LT(seconds, 2.0);  // the run, the check and the read-back
}

TEST_F(CoverageGpu, AModuleWithoutCountersIsALoadErrorAndTheRunnerGoesOn) {
  const LaunchPlan p = int_plan("probe", 1000, 128, 8);
  CountedRun r = runner_->run_counted(load(*plain_, "probe"), p, {}, Tolerance{}, kBranchCounterSymbol, 2);
  EXPECT_EQ(r.check.status, RunStatus::LoadError);
  EXPECT_TRUE(contains(r.check.message, "cuModuleGetGlobal(gi_branch_counts)")) << r.check.message;
  EXPECT_TRUE(r.counts.empty());
  r = runner_->run_counted(load(*cubin_, "probe"), p, {}, Tolerance{}, kBranchCounterSymbol,
                           instrumented_->counters() + 1);
  EXPECT_EQ(r.check.status, RunStatus::LoadError);
  EXPECT_TRUE(contains(r.check.message, "expected at least")) << r.check.message;
  EXPECT_TRUE(runner_->usable());
  r = runner_->run_counted(load(*cubin_, "probe"), p, {}, Tolerance{}, kBranchCounterSymbol, instrumented_->counters());
  EXPECT_TRUE(r.check.ok()) << r.check.message;
  EXPECT_EQ(r.counts.size(), instrumented_->counters());
}

// A seed end to end: instrumented, compiled, run on its training set.
TEST_F(CoverageGpu, TrilinearSeedOnItsTrainingSet) {
  const gi::Seed seed = gi::load_seed(gi::test::source_dir() / "seeds/resampling/trilinear");
  const KernelSpec spec = load_kernel_spec(seed.dir);
  const gi::SeedCoverage c = gi::measure_seed_coverage(*runner_, seed, spec, gi::Tuning{spec.default_block_size, {}},
                                                       std::nullopt);
  ASSERT_TRUE(c.report) << c.error;
  EXPECT_EQ(c.report->workloads, spec.training_workloads());
  EXPECT_EQ(c.report->sites.size(), 8u);  // if@32:5, if@54:21 and its six operands
  for (const nlohmann::json& run : c.runs) EXPECT_EQ(run["status"], "ok") << run.dump();
  // Exact relations that hold on any data: every active voxel (the guard's
  // true direction) tests its 8 corners, and the first operand of the
  // inside test is evaluated at every corner.
  const auto& d = c.report->directions;
  for (std::size_t w = 0; w < c.report->workloads.size(); ++w) {
    SCOPED_TRACE(c.report->workloads[w]);
    EXPECT_GT(d[1].counts[w], 0u);
    EXPECT_EQ(d[2].counts[w] + d[3].counts[w], 8 * d[1].counts[w]);
    EXPECT_EQ(d[4].counts[w] + d[5].counts[w], 8 * d[1].counts[w]);
  }
  std::cout << gi::fitness::coverage_table(*c.report);
}

}  // namespace
