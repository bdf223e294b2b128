// The registries that make "one new file" enough to add a `gi` command or a
// search strategy (gi/cli/command_registry.hpp, gi/search/search_strategy.hpp):
// a stand-in of each, registered here as its own file would, is found by
// everything that lists or runs them. And docs/commands.md, generated from
// every command's --help, is current. CPU only.
#include <gtest/gtest.h>

#include <filesystem>

#include "gi/cli/command_registry.hpp"
#include "gi/search/search_strategy.hpp"
#include "test_support.hpp"

namespace {

int stand_in_runs = 0;

void add_stand_in(CLI::App& app) {
  auto* cmd = app.add_subcommand("zz-stand-in", "A stand-in command registered by a test");
  cmd->callback([] { ++stand_in_runs; });
}

}  // namespace

GI_REGISTER_COMMAND("zz-stand-in", add_stand_in)

namespace {

// A strategy that proposes the empty patch, population times.
class StandInSearch : public gi::SearchAlgorithm {
 public:
  StandInSearch(const gi::SearchConfig& c, const gi::EditOperators&) : population_(c.population) {}
  std::vector<gi::grammar::Patch> propose(const gi::SearchState&, std::mt19937_64&) override {
    return std::vector<gi::grammar::Patch>(static_cast<std::size_t>(population_));
  }

 private:
  int population_;
};

}  // namespace

GI_REGISTER_SEARCH_STRATEGY("zz_stand_in", StandInSearch, "a stand-in strategy registered by a test")

namespace {

TEST(CommandRegistry, AStandInCommandIsListedAndRuns) {
  const auto names = gi::cli::command_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "zz-stand-in"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "evolve"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  auto app = gi::cli::make_app();
  EXPECT_NE(app->help().find("zz-stand-in"), std::string::npos);
  EXPECT_NE(gi::cli::commands_markdown(*app).find("## gi zz-stand-in"), std::string::npos);
  const char* argv[] = {"gi", "zz-stand-in"};
  stand_in_runs = 0;
  app->parse(2, const_cast<char**>(argv));
  EXPECT_EQ(stand_in_runs, 1);
}

TEST(SearchStrategyRegistry, AStandInStrategyIsAcceptedWhereverAStrategyIsNamed) {
  EXPECT_NE(gi::search_strategy_names().find("zz_stand_in"), std::string::npos);
  EXPECT_NE(gi::search_strategy_names().find("gp, local, random"), std::string::npos);
  gi::SearchConfig c;
  c.algorithm = "zz_stand_in";
  c.population = 3;
  const gi::SearchConfig back = gi::search_config_from_json(gi::to_json(c));
  EXPECT_EQ(back.algorithm, "zz_stand_in");
  const gi::Seed seed = gi::load_seed(gi::test::seed_dirs()[0]);
  const gi::EditOperators ops(seed.grammar, {});
  std::mt19937_64 rng(1);
  EXPECT_EQ(gi::make_search(back, ops)->propose(gi::SearchState{}, rng).size(), 3u);

  nlohmann::json unknown = gi::to_json(c);
  unknown["algorithm"] = "no_such_strategy";
  try {
    gi::search_config_from_json(unknown);
    FAIL() << "an unknown strategy must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("zz_stand_in"), std::string::npos) << e.what();  // the known ones listed
  }
}

// The committed page is what the built gi prints: regenerate it with the
// command in the message whenever a command or its help changes.
TEST(CommandsPage, IsCurrent) {
  const auto page = gi::test::run_gi("commands --markdown");
  ASSERT_EQ(page.exit_code, 0) << page.output;
  const std::filesystem::path committed = gi::test::source_dir() / "docs/commands.md";
  ASSERT_TRUE(std::filesystem::exists(committed)) << committed;
  EXPECT_TRUE(page.output == gi::read_text_file(committed))
      << "docs/commands.md is out of step with the commands: run\n    ./build/gi/gi commands --markdown > docs/commands.md";
}

}  // namespace
