// Every switch path of every seed that has switches, checked on the CPU
// emulator (fitness/emulation/cpu_emulator.hpp) against the double-precision reference
// on each of the seed's training checks (train:1 .. train:N, the small
// workloads; the large timed one is left to the GPU, unless the seed has no
// training checks). No GPU needed: this is
// how a new path (shared-memory tiles, warp shuffles, atomics) is checked in
// CI. One test per seed, so ctest spreads seeds over its jobs; compiled
// kernels are cached on disk across runs (keyed by their source).
#include <gtest/gtest.h>

#include <chrono>

#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/emulation/emulated_module.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/library/seed_emulation.hpp"
#include "gi/seed/switch_settings.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

std::vector<std::string> seeds_with_switches() {
  std::vector<std::string> names;
  for (const auto& dir : find_seed_dirs(test::source_dir() / "seeds")) {
    try {
      if (!fitness::load_kernel_spec(dir).switches.empty()) names.push_back(test::seed_name(dir));
    } catch (const std::exception&) {
      names.push_back(test::seed_name(dir));  // a broken spec fails its test, it is not skipped
    }
  }
  return names;
}

// Skips where there is no C++ compiler to build emulated kernels with (a
// GPU host the binaries were carried to).
class SeedPathsEmulated : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (fitness::emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  }
};

TEST_P(SeedPathsEmulated, EveryTrainingCheckPassesOnEverySwitchSetting) {
  const std::filesystem::path dir = test::source_dir() / "seeds" / GetParam();
  const Seed seed = load_seed(dir);
  const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
  // Without training checks, the timed workload itself (seconds on the CPU).
  if (spec.train_checks.empty()) std::cout << GetParam() << ": no train_checks; emulating the timed workload\n";
  fitness::EmulatorOptions options;
  options.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
  options.timeout = std::chrono::milliseconds(120000);
  const fitness::CpuEmulator emulator(options);
  const unsigned block = spec.default_block_size;
  std::vector<fitness::PreparedWorkload> workloads;
  for (const std::string& which : emulated_training_workloads(spec))
    workloads.push_back(fitness::prepare_workload(spec, which, 0, std::nullopt, block));
  for (const SwitchSetting& setting : switch_settings(seed)) {
    const std::string name = setting.name.empty() ? "(default)" : setting.name;
    const auto start = std::chrono::steady_clock::now();
    const EmulatedVariant variant = build_emulated_variant(emulator, seed, spec, setting.patch);
    ASSERT_TRUE(variant.ok()) << GetParam() << " " << name << ": " << variant.error;
    for (fitness::PreparedWorkload& work : workloads) {
      const fitness::CheckReport r = emulate_workload(emulator, variant, spec, work, block).check;
      EXPECT_TRUE(r.ok()) << GetParam() << " " << name << " on " << work.which << ": " << fitness::to_string(r.status)
                          << ": " << r.message;
    }
    std::cout << GetParam() << " " << name << ": " << workloads.size() << " training checks in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
  }
}

TEST(EmulateCommand, ChecksASwitchPathAndReportsCoverage) {
  if (fitness::emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  const std::string seed = (test::source_dir() / "seeds/bspline/deformation_field").string();
  const std::string cache = (std::filesystem::temp_directory_path() / "gi-emulator-test-cache" / "cli").string();
  const fitness::KernelSpec spec = fitness::load_kernel_spec(seed);
  const test::CommandOutput ok =
      test::run_gi("emulate \"" + seed + "\" --define BSPLINE_PATH=1 --cache \"" + cache + "\"");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  std::size_t passed = 0;
  for (std::size_t at = ok.output.find("\"ok\": true"); at != std::string::npos;
       at = ok.output.find("\"ok\": true", at + 1))
    ++passed;
  EXPECT_EQ(passed, spec.train_checks.size()) << ok.output;
  EXPECT_NE(ok.output.find("\"device\": \"CPU emulator\""), std::string::npos) << ok.output;
  const test::CommandOutput coverage = test::run_gi("emulate \"" + seed + "\" --coverage --workload train:1 --cache \"" +
                                                    cache + "\"");
  EXPECT_EQ(coverage.exit_code, 0) << coverage.output;
  EXPECT_NE(coverage.output.find("train:1@BSPLINE_PATH=1"), std::string::npos) << coverage.output;
  EXPECT_NE(coverage.output.find("directions taken"), std::string::npos) << coverage.output;
  const test::CommandOutput bad = test::run_gi("emulate \"" + seed + "\" --workload nonsense");
  EXPECT_NE(bad.exit_code, 0);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedPathsEmulated, ::testing::ValuesIn(seeds_with_switches()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SeedPathsEmulated);

}  // namespace
}  // namespace gi
