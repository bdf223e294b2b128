// Edit families as plug-ins (grammar/edit_family.hpp): each registers itself,
// every edit it offers is legal and prints to text that parses back to it,
// and lists of families name them or their groups. Per family behaviour is
// tested in patch_test, switches_test and coarsen_test.
#include <gtest/gtest.h>

#include <set>

#include "gi/search/edit_operators.hpp"
#include "gi/search/mutant_survey.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/switches.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

TEST(EditFamilies, EveryFamilyIsRegisteredOnce) {
  std::set<std::string> names;
  for (const EditFamily* f : edit_families()) {
    EXPECT_TRUE(names.insert(f->name()).second) << f->name();
    EXPECT_FALSE(f->syntax().empty()) << f->name();
  }
  for (const char* expected : {"delete", "replace", "insert", "unroll", "ldg", "fastmath", "restrict", "launch_bounds",
                               "const", "define", "coarsen"})
    EXPECT_TRUE(names.count(expected)) << expected;
  EXPECT_EQ(find_edit_family("no_such"), nullptr);
  EXPECT_THROW(edit_family("no_such"), std::runtime_error);
}

TEST(EditFamilies, ListsNameFamiliesGroupsOrAll) {
  EXPECT_EQ(parse_family_list("delete,insert"), (std::vector<std::string>{"delete", "insert"}));
  EXPECT_EQ(parse_family_list("line"), (std::vector<std::string>{"delete", "insert", "replace"}));
  EXPECT_EQ(parse_family_list("structural,switch"), (std::vector<std::string>{"coarsen", "define"}));
  EXPECT_EQ(parse_family_list("all").size(), edit_families().size());
  try {
    parse_family_list("delete,bogus");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown edit family 'bogus'"), std::string::npos);
  }
}

// A define edit with the define edits that make its setting one the spec
// allows (what EditOperators::append_random_edit draws); any other edit alone.
Patch with_allowed_setting(const Seed& seed, const EditContext& context, const Edit& e) {
  Patch p{{e}};
  if (e.family != "define") return p;
  std::map<std::string, std::string> setting = switch_values(seed.grammar, context);
  setting[e.target] = e.literal;
  const auto allowed = nearest_allowed_setting(context, setting, e.target);
  if (!allowed) return p;
  for (const auto& [name, value] : *allowed)
    if (setting[name] != value) p.edits.push_back(Edit{"define", name, "", 0, 0, value});
  return p;
}

// On every seed: every candidate of every family is legal, applies (a define
// edit with the companions its spec's combinations need), and round-trips
// through the text form.
TEST(EditFamilies, CandidatesAreLegalAndRoundTrip) {
  for (const auto& dir : test::seed_dirs()) {
    const Seed seed = load_seed(dir);
    EditContext context = seed.context;
    context.constants = mutant_constants(seed, nullptr);
    std::size_t checked = 0;
    for (const EditFamily* f : edit_families()) {
      const std::vector<Edit> all = f->candidates(seed.grammar, context);
      // Every tenth edit keeps the test quick; the first always.
      for (std::size_t i = 0; i < all.size(); i += 10) {
        const Edit& e = all[i];
        SCOPED_TRACE(test::seed_name(dir) + ": " + to_string(e));
        EXPECT_EQ(e.family, f->name());
        EXPECT_EQ(edit_problem(seed.grammar, context, e), std::nullopt);
        const Patch parsed = parse_patch(to_string(e));
        ASSERT_EQ(parsed.edits.size(), 1u);
        EXPECT_EQ(parsed.edits[0], e);
        EXPECT_NO_THROW(apply_patch(seed.grammar, with_allowed_setting(seed, context, e), context));
        ++checked;
      }
    }
    EXPECT_GT(checked, 10u) << test::seed_name(dir);
  }
}

TEST(EditFamilies, OperatorsDrawOnlyEnabledFamilies) {
  const Seed seed = load_seed(test::seed_dirs()[0]);
  OperatorConfig config;
  config.context = seed.context;
  config.enabled = parse_families("define,unroll");
  const EditOperators ops(seed.grammar, config);
  EXPECT_EQ(ops.available(), (std::vector<std::string>{"define", "unroll"}));
  std::mt19937_64 rng(5);
  std::set<std::string> drawn;
  for (int i = 0; i < 100; ++i) drawn.insert(ops.random_edit(rng).family);
  EXPECT_EQ(drawn, (std::set<std::string>{"define", "unroll"}));
  EXPECT_THROW(ops.random_edit("delete", rng), std::runtime_error);
}

TEST(EditFamilies, TheCommandListsFamiliesAndTheirEditsInASeed) {
  const auto r = test::run_gi("families \"" + (test::source_dir() / "seeds/bspline/deformation_field").string() + "\" --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = nlohmann::json::parse(r.output);
  ASSERT_EQ(rows.size(), edit_families().size());
  std::map<std::string, std::size_t> edits;
  for (const auto& row : rows) edits[row.at("family").get<std::string>()] = row.at("legal_edits").get<std::size_t>();
  EXPECT_EQ(edits.at("define"), 7u);   // BSPLINE_PATH 1, 2, 3; BSPLINE_ITEMS 2, 4, 8; BSPLINE_TABLE 1
  // 2, 4, 8, 16, 32 times consecutive, strided or vector (its guard's bound is
  // a parameter and a buffer is read only at the thread's item). It was 10
  // while candidates() read the work-item region after it had been freed.
  EXPECT_EQ(edits.at("coarsen"), 15u);
  EXPECT_GT(edits.at("insert"), 100u);
}

// A user who wonders why a transformation does not apply sees where its
// analysis looked and why it refused.
TEST(EditFamilies, TheCommandSaysWhyATransformationHasNoSite) {
  const auto r = test::run_gi("families \"" + (test::source_dir() / "tests/data/user/histogram256/kernel.cu").string() +
                              "\" --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : nlohmann::json::parse(r.output)) rows[row.at("family").get<std::string>()] = row;
  EXPECT_EQ(rows.at("aggregate").at("legal_edits"), 0u);
  ASSERT_TRUE(rows.at("aggregate").contains("refusals")) << rows.at("aggregate").dump();
  EXPECT_NE(rows.at("aggregate")["refusals"][0].get<std::string>().find(
                "line 12: atomicAdd(&bins[bin_of(values[i])], 1u): its address differs between threads"),
            std::string::npos)
      << rows.at("aggregate").dump();
  EXPECT_GT(rows.at("privatise").at("legal_edits"), 0u);  // the histogram is privatise's
  // A transformation family's edits as a patch writes them, one per legal edit; none for other groups.
  ASSERT_TRUE(rows.at("privatise").contains("edits")) << rows.at("privatise").dump();
  EXPECT_EQ(rows.at("privatise")["edits"].size(), rows.at("privatise").at("legal_edits").get<std::size_t>());
  EXPECT_EQ(rows.at("privatise")["edits"][0], "privatise:<_kernel.cu_12>=0");
  EXPECT_FALSE(rows.at("coarsen").contains("edits"));
  EXPECT_FALSE(rows.at("coarsen").contains("refusals")) << "families without an analysis list none";
  const auto text = test::run_gi("families \"" + (test::source_dir() / "tests/data/user/histogram256/kernel.cu").string() + "\"");
  EXPECT_NE(text.output.find("    refused at line 12: atomicAdd"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("\n    privatise:<_kernel.cu_12>=0\n"), std::string::npos) << text.output;
}

}  // namespace
}  // namespace gi::grammar
