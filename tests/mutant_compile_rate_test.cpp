// DESIGN: random single edits of every seed must compile with NVRTC at least
// 99% of the time. Measured here with real NVRTC compiles (no GPU needed).
#include <gtest/gtest.h>

#include <algorithm>

#include "gi/search/mutant_survey.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

class MutantCompileRate : public ::testing::TestWithParam<std::string> {};

TEST_P(MutantCompileRate, AtLeast99PercentOf300Compile) {
  const Seed seed = load_seed(test::source_dir() / GetParam());
  SurveyConfig config;
  config.count = 300;
  config.seed = 2026;
  config.jobs = 2;
  config.operators.context = seed.context;
  config.operators.context.constants = mutant_constants(seed, nullptr);
  const SurveyResult r = survey_mutants(seed, config);
  EXPECT_TRUE(r.seed_compiles);
  EXPECT_EQ(r.total, 300);
  EXPECT_GE(r.rate(), 0.99) << r.to_json().dump(2);
  // The line edits and the CUDA families with a site in every kernel
  // (delete, replace, insert, ldg, restrict, launch_bounds) were exercised;
  // unroll and const need a loop or a workload-invariant parameter.
  EXPECT_GE(r.per_type.size(), 6u) << r.to_json().dump(2);
  RecordProperty("compile_rate", std::to_string(r.rate()));
}

std::vector<std::string> seed_paths() {
  std::vector<std::string> paths;
  for (const auto& dir : test::seed_dirs()) paths.push_back("seeds/" + test::seed_name(dir));
  return paths;
}

// Every seed of the library, named family_kernel.
INSTANTIATE_TEST_SUITE_P(Seeds, MutantCompileRate, ::testing::ValuesIn(seed_paths()), [](const auto& info) {
  std::string n = info.param.substr(std::string("seeds/").size());
  std::replace(n.begin(), n.end(), '/', '_');
  return n;
});

}  // namespace
}  // namespace gi
