// `merge_runs` (grammar/edits/merge_runs.cpp): a thread's atomics to one
// address kept in a register until the address changes. Its variants compile
// with NVRTC and give the seed's result in the CPU emulator, alone and with
// coarsening (which gives a thread neighbouring items) or a private copy; a
// variant that loses the values fails the same checks; atomics that
// are no scatter are refused with privatise's reason. CPU only.
#include <gtest/gtest.h>


#include <filesystem>
#include <fstream>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"
#include "tests/family_test_fixture.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kUser = fs::path(GI_TEST_DATA) / "user";

class MergeRuns : public gi::test::FamilyTest {
 protected:
  static std::string the_edit(const gi::Seed& seed) {
    const auto candidates = gi::grammar::edit_family("merge_runs").candidates(seed.grammar, seed.context);
    EXPECT_EQ(candidates.size(), 1u);
    return candidates.empty() ? std::string() : gi::grammar::to_string(candidates[0]);
  }
};

TEST_F(MergeRuns, AScatterIntoACoarseGridGivesTheSeedsResultAloneCoarsenedAndPrivatised) {
  const gi::Seed seed = gi::load_seed(kUser / "grid_scatter");
  const std::string edit = the_edit(seed);
  ASSERT_FALSE(edit.empty());
  const std::string site = edit.substr(std::string("merge_runs:").size());
  const std::string source = gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch(edit + " coarsen:8"), seed.context);
  EXPECT_NE(source.find("// gi merge_runs: one atomicAdd per run"), std::string::npos) << source;
  EXPECT_NE(source.find("if (gi_run_at_"), std::string::npos) << source;
  gi::fitness::CompileRequest r;
  r.source = source;
  r.file_name = "kernel.cu";
  const auto compiled = gi::fitness::Compiler(std::nullopt).compile(r);
  EXPECT_TRUE(compiled.ok) << compiled.error << "\n" << source;
  for (const std::string& patch : {edit, edit + " coarsen:8", edit + " coarsen:4,strided", "privatise:" + site + "=0 " + edit,
                                  edit + " privatise:" + site + "=65536"}) {
    const auto run = emulate(kUser / "grid_scatter", patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  }
}

// The checks that pass the variants above see a wrong one: with the
// statement deleted, the runs stay empty and the grid stays 0.
TEST_F(MergeRuns, AVariantThatLosesTheValuesFails) {
  const gi::Seed seed = gi::load_seed(kUser / "grid_scatter");
  const std::string edit = the_edit(seed);
  const auto run = emulate(kUser / "grid_scatter", edit + " coarsen:8 " + edit.substr(std::string("merge_runs:").size()));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("\"status\": \"wrong_output\""), std::string::npos) << run.output;
}

// An early return becomes a predicate, so every thread reaches its last run's atomic.
TEST_F(MergeRuns, AKernelWithAnEarlyReturnGivesTheSeedsResult) {
  const gi::Seed seed = gi::load_seed(kUser / "joint_histogram64");
  const std::string edit = the_edit(seed);
  const auto run = emulate(kUser / "joint_histogram64", edit);
  EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
}

// An atomic at one address for every thread is aggregate's, and says so.
TEST_F(MergeRuns, AnAtomicThatIsNoScatterIsRefusedWithTheReason) {
  const gi::Seed seed = gi::load_seed(kUser / "dot_product");
  const auto& family = gi::grammar::edit_family("merge_runs");
  EXPECT_TRUE(family.candidates(seed.grammar, seed.context).empty());
  std::size_t atomic = 0;
  while (seed.grammar.rule(atomic).text.find("atomicAdd(") == std::string::npos ||
         seed.grammar.rule_name(atomic).rfind("<fixed", 0) == 0)
    ++atomic;
  const auto why = family.problem(seed.grammar, seed.context,
                                  gi::grammar::Edit{"merge_runs", seed.grammar.rule_name(atomic), "", 0, 0, ""});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("no merge_runs site"), std::string::npos) << *why;
}

}  // namespace
