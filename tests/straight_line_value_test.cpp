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
  std::string updates;     // "+1 *4 +(j) +1*(j - 0)": each update, in program order
};

// The value of `name` at its `nth` (0-based) read right after the tokens
// `preceded_by` in the file's only kernel: by default a read inside
// `out[...]`, so that a test can point at one read among several.
Read read_at(const std::string& source, const std::string& name, int nth,
             const std::vector<std::string>& preceded_by = {"out", "["}) {
  const grammar::ParsedKernel k = grammar::parse_kernel(source, "k.cu");
  int kernel = -1;
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (k.functions[f].is_kernel) kernel = static_cast<int>(f);
  const auto after_marker = [&](std::size_t t) {
    if (t < preceded_by.size()) return false;
    for (std::size_t i = 0; i < preceded_by.size(); ++i)
      if (k.tokens[t - preceded_by.size() + i].text != preceded_by[i]) return false;
    return true;
  };
  int seen = 0;
  for (std::size_t t = 0; t < k.tokens.size(); ++t) {
    if (k.tokens[t].text != name || !after_marker(t)) continue;
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
        // A loop's passes: "*(j - s)" after the step.
        if (u.counter)
          if (const auto s = analysis::parse_expression(k.tokens, u.start_first, u.start_last))
            r.updates += "*(" + k.tokens[u.counter].text + " - " + analysis::expression_text(k.tokens, *s) + ")";
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

// `if (C) k = A;` (braced or not) and `if (C) k = A; else k = B;` are one
// conditional value: A where C holds, else B or the value before the if,
// read at the `if`; the updates after still count.
TEST(StraightLineValue, AnIfThatOnlyAssignsItIsAConditionalValue) {
  const std::string head = "__global__ void f(float* out, int n, bool b) {\n  int k = n - 1;\n";
  const Read clamp = read_at(head + "  if (k < 0) k = 0;\n  out[k] = 0.f;\n}\n", "k", 0);
  ASSERT_TRUE(clamp.value) << clamp.why;
  EXPECT_TRUE(clamp.value->conditional());
  EXPECT_FALSE(clamp.value->has_else());
  EXPECT_EQ(clamp.definition, "0");
  EXPECT_EQ(clamp.value->name, "k");
  const Read braced = read_at(head + "  if (b) {\n    k = 2;\n  }\n  k += 3;\n  out[k] = 0.f;\n}\n", "k", 0);
  ASSERT_TRUE(braced.value) << braced.why;
  EXPECT_TRUE(braced.value->conditional());
  EXPECT_EQ(braced.definition, "2");
  EXPECT_EQ(braced.updates, "+(3)");
  const Read both = read_at(head + "  if (b) k = 1;\n  else {\n    k = n;\n  }\n  out[k] = 0.f;\n}\n", "k", 0);
  ASSERT_TRUE(both.value) << both.why;
  EXPECT_TRUE(both.value->has_else());
  EXPECT_EQ(both.definition, "1");
}

// An else-if chain whose every link assigns it (a clamp written out, as
// NiftyReg's GetSlidedValues does): one conditional value, its links after
// the first in order, and the else or the value before the chain.
TEST(StraightLineValue, AnElseIfChainOfAssignmentsIsAConditionalValue) {
  const std::string head = "__global__ void f(float* out, int n, int x) {\n  int k = x;\n";
  const Read clamp = read_at(head + "  if (x < 0) {\n    k = 0;\n  } else if (x >= n) {\n    k = n - 1;\n  }\n  out[k] = 0.f;\n}\n",
                             "k", 0);
  ASSERT_TRUE(clamp.value) << clamp.why;
  EXPECT_EQ(clamp.definition, "0");
  ASSERT_EQ(clamp.value->chain.size(), 1u);
  EXPECT_FALSE(clamp.value->has_else());
  const Read three = read_at(head + "  if (x < 0) k = 0;\n  else if (x >= n) k = n - 1;\n  else if (x == 3) k = 2;\n  else k = 1;\n"
                                    "  out[k] = 0.f;\n}\n",
                             "k", 0);
  ASSERT_TRUE(three.value) << three.why;
  ASSERT_EQ(three.value->chain.size(), 2u);
  EXPECT_TRUE(three.value->has_else());
}

TEST(StraightLineValue, RefusesWhereThePathDecidesTheValue) {
  const auto why = [](const std::string& body) {
    const Read r = read_at("__global__ void f(float* out, int n, bool b) {\n" + body + "}\n", "k", 0);
    EXPECT_FALSE(r.value) << body;
    return r.why;
  };
  EXPECT_NE(why("  int k = n;\n  if (b) k += 1;\n  out[k] = 0.f;\n").find("assigned on line 3 under a condition"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  if (b) {\n    k = 2;\n    out[0] = 1.f;\n  }\n  out[k] = 0.f;\n").find("block from line 3 to line 6"),
            std::string::npos);
  // Conditional assignments gi does not read as one value: the read in the
  // else (the if's body never ran there), an if that is itself a braceless
  // body (`if (b) if (...)`, the value before it need not hold where its
  // condition fails), an else-if chain one of whose links does something
  // else, a condition that assigns it.
  EXPECT_NE(why("  int k = n;\n  if (b) k = 2; else out[k] = 0.f;\n").find("assigned on line 3 under a condition"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  if (b) if (k > 4) k = 4;\n  out[k] = 0.f;\n").find("under a condition"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  if (b) out[0] = 1.f; else if (k > 4) k = 4;\n  out[k] = 0.f;\n").find("under a condition"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  if ((k = n - 1) > 4) k = 4;\n  out[k] = 0.f;\n").find("under a condition"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  for (int j = 0; j < n; ++j) if (b) k = j;\n  out[k] = 0.f;\n").find("under a condition or loop"),
            std::string::npos);
  // A loop that steps it other than once per pass in lockstep with its counter.
  const std::string loop = "  int k = 0;\n  for (int j = 0; j < n; ++j) {\n";
  EXPECT_NE(why(loop + "    out[k] = 0.f;\n    if (b) k++;\n  }\n").find("line 5 under a condition or inner loop"),
            std::string::npos);
  EXPECT_NE(why(loop + "    out[k] = 0.f;\n    k++;\n    k += 2;\n  }\n").find("line 6 a second time in a pass"),
            std::string::npos);
  EXPECT_NE(why(loop + "    out[k] = 0.f;\n    k *= 2;\n  }\n").find("line 5 other than by a step"),
            std::string::npos);
  EXPECT_NE(why(loop + "    out[k] = 0.f;\n    if (b) continue;\n    k++;\n  }\n").find("'continue' on line 5"),
            std::string::npos);
  EXPECT_NE(why("  int k = 0;\n  for (int j = 0; j < n; j += 2) {\n    out[k] = 0.f;\n    k++;\n  }\n")
                .find("the loop on line 3 assigns it (its counter 'j' steps other than by 1)"),
            std::string::npos);
  EXPECT_NE(why(loop + "    out[k] = 0.f;\n    k++;\n    j++;\n  }\n").find("counter 'j' is assigned in the body"),
            std::string::npos);
  EXPECT_NE(why(loop + "    out[k] = 0.f;\n    k += j;\n  }\n").find("its step names 'j', which changes from pass"),
            std::string::npos);
  EXPECT_NE(why("  int k = 0, d = 1;\n  for (int j = 0; j < n; ++j) {\n    out[k] = 0.f;\n    k += d;\n    d *= 2;\n  }\n")
                .find("its step names 'd', which changes from pass to pass"),
            std::string::npos);
  EXPECT_NE(why("  int k = 0, s = n;\n  for (int j = s; j < n; ++j) {\n    out[k] = 0.f;\n    k++;\n    s--;\n  }\n")
                .find("start names 's', which the body assigns"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  k /= 2;\n  out[k] = 0.f;\n").find("line 3 changes it in a way gi cannot follow"),
            std::string::npos);
  EXPECT_NE(why("  int k;\n  out[k] = 0.f;\n").find("declared without a value on line 2"), std::string::npos);
  // A loop inside a lambda is one element to the structure: its counter's
  // `++k` is no single step before the read (NiftyReg's AssembleRigid read
  // U[k * 3 + b] as if k stopped at 1).
  EXPECT_NE(why("  float s = 0;\n  auto f = [&]() { for (int k = 0; k < 3; ++k) s += out[k]; };\n  f();\n")
                .find("within one statement (a lambda's body)"),
            std::string::npos);
  EXPECT_NE(why("  int k = n;\n  switch (n) {\n  case 1:\n    out[k] = 0.f;\n  }\n").find("jump target on line 4"),
            std::string::npos);
  // Never assigned (a parameter, a macro): no value from the path, and no
  // refusal, also where a jump target or a conditional stands before the read.
  const Read parameter = read_at("__global__ void f(float* out, int n) {\n  out[n] = 0.f;\n}\n", "n", 0);
  EXPECT_FALSE(parameter.value);
  EXPECT_EQ(parameter.why, "");
  const Read macro = read_at(
      "__global__ void f(float* out, int n) {\n#ifdef WIDE\n  n = 2 * n;\n#endif\n"
      "  switch (n) {\n  case 1:\n    out[TILE] = 0.f;\n  }\n}\n",
      "TILE", 0);
  EXPECT_FALSE(macro.value);
  EXPECT_EQ(macro.why, "");
}

// A loop that steps the name once per pass, at its body's own level, in
// lockstep with its counter (NiftyReg's `jacIndex++` beside `pixelX`, a row
// offset stepped by the row length): the passes before this one add
// step * (counter - start), before the step or after it.
TEST(StraightLineValue, ALoopThatStepsItOncePerPassIsFollowedInLockstepWithItsCounter) {
  const char* source =
      "__global__ void f(float* out, int n, int cols) {\n"
      "  for (int y = 0; y < n; ++y) {\n"
      "    int k = y * cols + 3;\n"
      "    for (int x = y - 1; x < y + 2; x++) {\n"
      "      out[k] = 1.f;\n"
      "      k += 2;\n"
      "      out[k] = 2.f;\n"
      "    }\n"
      "  }\n"
      "  int r = 0;\n"
      "  for (int i = 0; i < n; i += 1) {\n"
      "    out[r + 1] = 0.f;\n"
      "    r -= cols;\n"
      "  }\n"
      "  int w = 5;\n"
      "  for (int j = 0; j < 4; ++j) out[w++] = 0.f;\n"
      "}\n";
  const Read before = read_at(source, "k", 0);
  ASSERT_TRUE(before.value) << before.why;
  EXPECT_EQ(before.definition, "y * cols + 3");
  EXPECT_EQ(before.updates, "+(2)*(x - y - 1)");
  const Read after = read_at(source, "k", 1);
  ASSERT_TRUE(after.value) << after.why;
  EXPECT_EQ(after.updates, "+(2)*(x - y - 1) +(2)");
  const Read down = read_at(source, "r", 0);
  ASSERT_TRUE(down.value) << down.why;
  EXPECT_EQ(down.updates, "-(cols)*(i - 0)");
  // A braceless body: `w++` in the read's own statement steps after it.
  const Read braceless = read_at(source, "w", 0);
  ASSERT_TRUE(braceless.value) << braceless.why;
  EXPECT_EQ(braceless.definition, "5");
  EXPECT_EQ(braceless.updates, "+1*(j - 0)");
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
  // `i < n`: the read after the for's first `;`.
  const Read counter =
      read_at("__global__ void f(float* out, int n) {\n  for (int i = 0; i < n; ++i) out[i] = 0.f;\n}\n", "i", 0, {";"});
  EXPECT_FALSE(counter.value);
  EXPECT_NE(counter.why.find("loop header on line 2, and the loop assigns it"), std::string::npos) << counter.why;
  // A limit the loop never assigns is read as straight-line code leaves it.
  const Read limit = read_at(
      "__global__ void f(float* out, int n) {\n  int m = n;\n  m += 2;\n"
      "  for (int i = 0; i < m; ++i) out[i] = 0.f;\n}\n",
      "m", 0, {"<"});
  ASSERT_TRUE(limit.value) << limit.why;
  EXPECT_EQ(limit.definition, "n");
  EXPECT_EQ(limit.updates, "+(2)");
}

}  // namespace
}  // namespace gi
