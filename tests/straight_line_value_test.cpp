// The value a local holds where it is read, from straight-line code
// (analysis/straight_line_value.hpp): the definition and the steps after
// it, and a refusal with its reason wherever the path decides the value.
#include "analysis/straight_line_value.hpp"

#include <gtest/gtest.h>

#include "analysis/expression.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi {
namespace {

struct Read {
  std::optional<analysis::StraightLineValue> value;
  std::string why;
  std::string definition;  // the defining expression's text
  std::string updates;     // "+1 *4 +(j)": each update, in program order
};

// The value of `name` at its `nth` (0-based) read written `marker` in the
// file's only kernel: `marker` is the name followed by the tokens after it
// ("k ]"), so that a test can point at one read among several.
Read read_at(const std::string& source, const std::string& name, int nth) {
  const grammar::ParsedKernel k = grammar::parse_kernel(source, "k.cu");
  int kernel = -1;
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (k.functions[f].is_kernel) kernel = static_cast<int>(f);
  // The nth occurrence of the name inside `out[...]`.
  int seen = 0;
  for (std::size_t t = 2; t < k.tokens.size(); ++t) {
    if (k.tokens[t].text != name || !k.tokens[t - 1].is("[") || !k.tokens[t - 2].is("out")) continue;
    if (seen++ != nth) continue;
    Read r;
    r.value = analysis::straight_line_value(k, kernel, name, t, r.why);
    if (r.value)
      if (const auto e = analysis::parse_expression(k.tokens, r.value->first, r.value->last))
        r.definition = analysis::expression_text(k.tokens, *e);
    if (r.value)
      for (const auto& u : r.value->updates) {
        r.updates += (r.updates.empty() ? "" : " ") + std::string(1, u.op);
        if (u.first > u.last) r.updates += std::to_string(u.amount);
        else if (const auto e = analysis::parse_expression(k.tokens, u.first, u.last))
          r.updates += "(" + analysis::expression_text(k.tokens, *e) + ")";
      }
    return r;
  }
  throw std::runtime_error("no read of " + name);
}

const char* kRecord =
    "__global__ void jac(float* out, int n) {\n"
    "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int k = tid;\n"
    "  if (tid < n) {\n"
    "    k = tid * 4;\n"
    "    out[k++] = 1.f;\n"
    "    out[k++] = 2.f;\n"
    "    ++k;\n"
    "    k *= n + 1;\n"
    "    k -= 2;\n"
    "    out[k] = 3.f;\n"
    "  }\n"
    "}\n";

TEST(StraightLineValue, TheLastDefinitionOnThePathAndTheUpdatesSinceIt) {
  const Read first = read_at(kRecord, "k", 0);
  ASSERT_TRUE(first.value) << first.why;
  EXPECT_EQ(first.definition, "tid * 4");
  EXPECT_EQ(first.updates, "");
  EXPECT_EQ(first.value->line, 5);
  const Read second = read_at(kRecord, "k", 1);
  ASSERT_TRUE(second.value) << second.why;
  EXPECT_EQ(second.updates, "+1");
  const Read last = read_at(kRecord, "k", 2);
  ASSERT_TRUE(last.value) << last.why;
  EXPECT_EQ(last.updates, "+1 +1 +1 *(n + 1) -(2)");
}

TEST(StraightLineValue, AnIfBlockWithNoAssignmentIsSteppedOver) {
  const Read r = read_at(
      "__global__ void f(float* out, const float* in, int n) {\n"
      "  int k = blockIdx.x * 3;\n"
      "  if (in[0] > 0.f) { out[0] = 1.f; } else { out[1] = 2.f; }\n"
      "  for (int j = 0; j < n; ++j) out[2] += in[j];\n"
      "  out[k] = 0.f;\n"
      "}\n",
      "k", 0);
  ASSERT_TRUE(r.value) << r.why;
  EXPECT_EQ(r.definition, "blockIdx.x * 3");
}

TEST(StraightLineValue, RefusesWhereThePathDecidesTheValue) {
  const auto why = [](const std::string& body) {
    const Read r = read_at("__global__ void f(float* out, int n, bool b) {\n" + body + "}\n", "k", 0);
    EXPECT_FALSE(r.value) << body;
    return r.why;
  };
  EXPECT_NE(why("  int k = n;\n  if (b) k += 1;\n  out[k] = 0.f;\n").find("assigned on line 3 under a condition"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  if (b) {\n    k = 2;\n  }\n  out[k] = 0.f;\n").find("block from line 3 to line 5"),
            std::string::npos);
  EXPECT_NE(why("  int k = 0;\n  for (int j = 0; j < n; ++j) {\n    out[k] = 0.f;\n    k++;\n  }\n")
                .find("the loop on line 3 assigns it"),
            std::string::npos);
  EXPECT_NE(why("  int k = 0;\n  for (int j = 0; j < n; ++j) out[k++] = 0.f;\n").find("the loop on line 3"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  k /= 2;\n  out[k] = 0.f;\n").find("line 3 changes it in a way gi cannot follow"),
            std::string::npos);
  EXPECT_NE(why("  int k;\n  out[k] = 0.f;\n").find("declared without a value on line 2"), std::string::npos);
  EXPECT_NE(why("  int k = n;\n  switch (n) {\n  case 1:\n    out[k] = 0.f;\n  }\n").find("jump target on line 4"),
            std::string::npos);
  // Never assigned (a parameter): no value from the path, and no refusal.
  const Read parameter = read_at("__global__ void f(float* out, int n) {\n  out[n] = 0.f;\n}\n", "n", 0);
  EXPECT_FALSE(parameter.value);
  EXPECT_EQ(parameter.why, "");
}

// The read inside the assignment's own value sees the value before it.
TEST(StraightLineValue, AReadInItsOwnAssignmentSeesTheValueBefore) {
  const Read r = read_at(
      "__global__ void f(float* out, int n) {\n"
      "  int k = n;\n"
      "  k = out[k] > 0.f ? 1 : 2;\n"
      "}\n",
      "k", 0);
  ASSERT_TRUE(r.value) << r.why;
  EXPECT_EQ(r.definition, "n");
}

TEST(StraightLineValue, AReadInALoopHeaderIsRefusedWhereTheLoopAssignsIt) {
  const grammar::ParsedKernel k = grammar::parse_kernel(
      "__global__ void f(float* out, int n) {\n  for (int i = 0; i < n; ++i) out[i] = 0.f;\n}\n", "k.cu");
  std::size_t use = 0;
  for (std::size_t t = 0; t < k.tokens.size(); ++t)
    if (k.tokens[t].text == "i" && k.tokens[t + 1].is("<")) use = t;
  std::string why;
  EXPECT_FALSE(analysis::straight_line_value(k, 0, "i", use, why));
  EXPECT_NE(why.find("loop header on line 2, and the loop assigns it"), std::string::npos) << why;
  // A limit the loop never assigns is read as straight-line code leaves it.
  const grammar::ParsedKernel limit = grammar::parse_kernel(
      "__global__ void f(float* out, int n) {\n  int m = n;\n  m += 2;\n"
      "  for (int i = 0; i < m; ++i) out[i] = 0.f;\n}\n",
      "k.cu");
  for (std::size_t t = 0; t < limit.tokens.size(); ++t)
    if (limit.tokens[t].text == "m" && limit.tokens[t - 1].is("<")) use = t;
  why.clear();
  const auto m = analysis::straight_line_value(limit, 0, "m", use, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->updates.size(), 1u);
}

}  // namespace
}  // namespace gi
