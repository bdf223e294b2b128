// DESIGN: random single edits of every seed must compile with NVRTC at least
// 99% of the time. Measured here with real NVRTC compiles (no GPU needed).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gi/search/mutant_survey.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;

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

// A user's seed that does not compile gets NVRTC's log and an error, never
// "rate 0" with exit code 0 (found trying gi on real code).
TEST(MutantSurvey, ASeedThatDoesNotCompileIsAnErrorWithNvrtcsLog) {
  const fs::path dir = fs::temp_directory_path() / ("gi-bad-seed-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "bad.cu") << "__global__ void k(float* o) {\n  o[0] = undefined_thing;\n}\n";
  const Seed seed = load_seed(dir / "bad.cu");
  SurveyConfig config;
  config.count = 5;
  config.jobs = 1;
  config.operators.context = seed.context;
  try {
    survey_mutants(seed, config);
    ADD_FAILURE() << "a seed that does not compile gave a survey";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("does not compile"), std::string::npos) << what;
    EXPECT_NE(what.find("undefined_thing"), std::string::npos) << what;  // NVRTC's log names it
  }
  fs::remove_all(dir);
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
