// DESIGN: random single edits of every seed must compile with NVRTC at least
// 99% of the time. Measured here with real NVRTC compiles (no GPU needed).
#include <gtest/gtest.h>

#include "gi/mutant_survey.hpp"
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
  config.operators.constants = mutant_constants(seed, nullptr);
  const SurveyResult r = survey_mutants(seed, config);
  EXPECT_TRUE(r.seed_compiles);
  EXPECT_EQ(r.total, 300);
  EXPECT_GE(r.rate(), 0.99) << r.to_json().dump(2);
  // Every family with a site in the seed was exercised.
  EXPECT_GE(r.per_type.size(), 7u) << r.to_json().dump(2);
  RecordProperty("compile_rate", std::to_string(r.rate()));
}

INSTANTIATE_TEST_SUITE_P(Seeds, MutantCompileRate,
                         ::testing::Values("seeds/bspline/deformation_field", "seeds/resampling/trilinear",
                                           "seeds/tools/convolution_x"),
                         [](const auto& info) {
                           std::string n = info.param.substr(info.param.rfind('/') + 1);
                           return n;
                         });

}  // namespace
}  // namespace gi
