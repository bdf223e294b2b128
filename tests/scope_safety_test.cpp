// Scope safety: a line is copied or substituted only where every name it
// uses means the same declaration; fixed structure is never edited.
#include <gtest/gtest.h>

#include <random>

#include "gi/search/edit_operators.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

std::size_t at_line(const Grammar& g, int line) {
  for (std::size_t i = 0; i < g.rules().size(); ++i)
    if (g.rule(i).first_line == line) return i;
  throw std::runtime_error("no rule starts at line " + std::to_string(line));
}

TEST(ScopeSafety, LoopVariableLineIsNeverCopiedOutsideItsLoop) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const std::size_t uses_k = at_line(g, 29);  // sum += c_weights[k + RADIUS] * input[idx];
  for (std::size_t a = 0; a < g.rules().size(); ++a) {
    const int line = g.rule(a).first_line;
    const bool inside_k_loop = line >= 22 && line < 31;  // after the header, before its closing brace
    if (!inside_k_loop) {
      EXPECT_FALSE(can_insert_after(g, a, uses_k)) << "anchor line " << line;
    }
  }
  EXPECT_TRUE(can_insert_after(g, at_line(g, 25), uses_k) || can_insert_after(g, at_line(g, 28), uses_k));
  // And it can replace no statement outside the loop.
  for (std::size_t t = 0; t < g.rules().size(); ++t) {
    if (g.rule(t).kind != RuleKind::Statement) continue;
    const int line = g.rule(t).first_line;
    if (line < 22 || line > 30) {
      EXPECT_FALSE(can_replace_statement(g, t, uses_k)) << "target line " << line;
    }
  }
}

TEST(ScopeSafety, StatementUsingALocalIsNotCopiedBeforeItsDeclaration) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const std::size_t uses_idx = at_line(g, 25);  // idx = 0;  (idx declared at 23)
  EXPECT_FALSE(can_insert_after(g, at_line(g, 22), uses_idx));  // right after the for header: idx not yet declared
  EXPECT_TRUE(can_insert_after(g, at_line(g, 23), uses_idx));
}

// A copy must not read a local before anything assigns it: undefined
// behaviour that can pass every check (grammar/local_assignments.hpp).
TEST(ScopeSafety, ALineIsNotCopiedToWhereALocalItReadsHasNoValueYet) {
  const std::string src =
      "__global__ void k(float* out, int n) {\n"   // 1
      "  float a;\n"                               // 2
      "  float b;\n"                               // 3
      "  float c = 3.f;\n"                         // 4
      "  out[0] = c;\n"                            // 5
      "  a = 1.f;\n"                               // 6
      "  out[1] = a;\n"                            // 7
      "  b = a + c;\n"                             // 8
      "  out[2] = b;\n"                            // 9
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  const std::size_t reads_a = at_line(g, 7), reads_b = at_line(g, 9), reads_c = at_line(g, 5);
  EXPECT_FALSE(can_insert_after(g, at_line(g, 5), reads_a)) << "a has no value before line 6";
  EXPECT_TRUE(can_insert_after(g, at_line(g, 6), reads_a));
  EXPECT_FALSE(can_replace_statement(g, at_line(g, 6), reads_a)) << "replacing a's only assignment leaves it unset";
  EXPECT_FALSE(can_replace_statement(g, at_line(g, 8), reads_b)) << "b = a + c is b's only assignment";
  EXPECT_TRUE(can_replace_statement(g, at_line(g, 6), reads_c)) << "c is initialised where it is declared";
  EXPECT_TRUE(can_insert_after(g, at_line(g, 8), reads_b));
  // A plain `=` target is written, not read: `a = 1.f;` may stand anywhere a is declared.
  EXPECT_TRUE(can_insert_after(g, at_line(g, 5), at_line(g, 6)));
}

TEST(ScopeSafety, AnAssignmentInOneSwitchPathGivesNoValueInAnother) {
  const std::string src =
      "#define PATH 0\n"                           // 1
      "__global__ void k(float* out, int n) {\n"   // 2
      "  float g;\n"                               // 3
      "  int p;\n"                                 // 4
      "#if PATH == 1\n"                            // 5
      "  g = 2.f;\n"                               // 6
      "  p = (int)g;\n"                            // 7
      "#else\n"                                    // 8
      "  out[1] = 0.f;\n"                          // 9
      "  g = 1.f;\n"                               // 10
      "  p = (int)g;\n"                            // 11
      "  out[0] = (float)p;\n"                     // 12
      "#endif\n"                                   // 13
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  EXPECT_FALSE(can_insert_after(g, at_line(g, 9), at_line(g, 11))) << "path 1's g = 2.f never runs in path 0";
  EXPECT_TRUE(can_insert_after(g, at_line(g, 10), at_line(g, 11)));
}

// The two line edits evolution found on an H100 that read uninitialised
// locals (evolved/nvidia-h100-80gb-hbm3/bspline-log_jacobian_gradient_exact/REVIEW.md).
TEST(ScopeSafety, TheEvolvedEditsThatReadUninitialisedLocalsAreIllegal) {
  for (const auto& [seed, edit] : std::vector<std::pair<std::string, std::string>>{
           {"seeds/bspline/log_jacobian_gradient_exact", "<_kernel.cu_165><_kernel.cu_234>"},
           {"seeds/bspline/deformation_field", "<_kernel.cu_235><_kernel.cu_272>"}}) {
    const Seed s = load_seed(test::source_dir() / seed);
    const auto problem = edit_problem(s.grammar, s.context, parse_patch(edit).edits.at(0));
    ASSERT_TRUE(problem.has_value()) << seed << " " << edit;
    EXPECT_NE(problem->find("reads a local before anything assigns it"), std::string::npos) << *problem;
  }
}

TEST(ScopeSafety, ShadowedNamesDoNotTravel) {
  const std::string src =
      "__global__ void k(float* out, int n) {\n"
      "  float v;\n"
      "  v = 1.f;\n"
      "  for (int i = 0; i < n; i++) {\n"
      "    float v;\n"
      "    v = 2.f;\n"
      "    out[i] = v;\n"
      "  }\n"
      "  out[0] = v;\n"
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  // `v = 1.f;` (outer v) must not be copied where `v` means the inner one.
  EXPECT_FALSE(can_insert_after(g, at_line(g, 5), at_line(g, 3)));
  EXPECT_FALSE(can_replace_statement(g, at_line(g, 6), at_line(g, 3)));
  // `out[0] = v;` may go before the loop, where v is the same outer v.
  EXPECT_TRUE(can_insert_after(g, at_line(g, 3), at_line(g, 9)));
}

TEST(ScopeSafety, BreakAndContinueNeedALoop) {
  const std::string src =
      "__global__ void k(float* out, int n) {\n"
      "  int i;\n"
      "  i = 0;\n"
      "  for (int j = 0; j < n; j++) {\n"
      "    if (out[j] > 0.f) {\n"
      "      continue;\n"
      "    }\n"
      "    i = j;\n"
      "  }\n"
      "  out[0] = i;\n"
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  EXPECT_FALSE(can_insert_after(g, at_line(g, 3), at_line(g, 6)));
  EXPECT_FALSE(can_replace_statement(g, at_line(g, 10), at_line(g, 6)));
  EXPECT_TRUE(can_insert_after(g, at_line(g, 8), at_line(g, 6)));
}

TEST(ScopeSafety, NothingIsInsertedBetweenIfBodyAndElseOrAfterAPragma) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  EXPECT_FALSE(g.context(at_line(g, 35)).anchor_ok);  // if body followed by else
  EXPECT_FALSE(g.context(at_line(g, 34)).anchor_ok);  // brace-less if header
  EXPECT_FALSE(g.context(at_line(g, 21)).anchor_ok);  // pragma before its loop
  EXPECT_FALSE(g.context(at_line(g, 39)).anchor_ok);  // after the function
  EXPECT_TRUE(g.context(at_line(g, 12)).anchor_ok);   // start of the kernel body
}

TEST(ScopeSafety, RandomEditsNeverTouchFixedStructure) {
  for (const auto& dir : test::seed_dirs()) {
    const auto seed = load_seed(dir);
    const Grammar& g = seed.grammar;
    EditOperators ops(g, OperatorConfig{});
    std::mt19937_64 rng(11);
    for (int i = 0; i < 2000; ++i) {
      const Edit e = ops.random_edit(rng);
      ASSERT_FALSE(edit_problem(g, e)) << to_string(e) << ": " << *edit_problem(g, e);
      if (e.family == "delete" || e.family == "replace") {
        bool sub = false;
        const auto t = g.find(e.target, &sub);
        ASSERT_TRUE(t);
        const RuleKind k = g.rule(*t).kind;
        EXPECT_TRUE(sub || k == RuleKind::Statement || k == RuleKind::Pragma) << to_string(e);
      }
      // Every loop header and brace of the seed survives any single edit
      // (warp_per_item remakes the header of the loop it shares, by design:
      // its own tests check what it writes).
      if (e.family == "warp_per_item") continue;
      const std::string out = apply_patch(g, Patch{{e}});
      for (const auto& r : g.rules())
        if (r.kind == RuleKind::For || (r.kind == RuleKind::Fixed && r.text.find('{') != std::string::npos &&
                                        r.text.find("__global__") == std::string::npos)) {
          EXPECT_NE(out.find(r.text), std::string::npos) << to_string(e) << " lost: " << r.text;
        }
    }
  }
}

}  // namespace
}  // namespace gi::grammar
