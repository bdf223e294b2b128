#pragma once
// What the transformation families' tests (aggregate, privatise,
// warp_per_item, merge_runs, scatter_cache, remap) share: a scratch folder
// per test, `gi emulate SEED --patch EDIT` on a variant, a variant's status
// in the emulator, and an NVRTC compile of a patched source.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/library/seed_emulation.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/patch_apply.hpp"
#include "tests/test_support.hpp"

namespace gi::test {

// `text` with the first `from` replaced by `to`; a failure where `from` is
// not there (a test's variant of a kernel that no longer holds its line).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class FamilyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gi-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "-" +
            std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `gi emulate SEED --patch PATCH_TEXT`: exit code and output.
  CommandOutput emulate(const std::filesystem::path& seed, const std::string& patch_text) {
    const std::filesystem::path patch = dir_ / "p.gi";
    std::ofstream(patch) << patch_text << "\n";
    return run_gi("emulate \"" + seed.string() + "\" --patch \"" + patch.string() + "\" --cache \"" +
                  (dir_ / "cache").string() + "\"");
  }

  // Expects `source` to compile with NVRTC; `what` names it in the failure.
  static void compiles(const std::string& source, const std::string& what) {
    fitness::CompileRequest r;
    r.source = source;
    r.file_name = "kernel.cu";
    fitness::Compiler compiler(std::nullopt);
    const auto result = compiler.compile(r);
    EXPECT_TRUE(result.ok) << what << ":\n" << result.error << "\n" << source;
  }

  // The status of a variant (not necessarily one a patch makes) in the
  // emulator on one of the seed's training workloads (0: train), the
  // seed's emulated run its reference.
  gi::fitness::RunStatus status_of(const gi::Seed& seed, const gi::grammar::PatchedKernel& variant,
                                   std::size_t training_workload = 0) {
    const gi::fitness::KernelSpec spec = gi::fitness::load_kernel_spec(seed.dir);
    gi::fitness::EmulatorOptions options;
    options.cache_dir = dir_ / "emulator";
    const gi::fitness::CpuEmulator emulator(options);
    gi::use_emulated_seed_as_reference(emulator, seed, spec);
    gi::EmulatedVariant run;
    run.kernel = emulator.load(variant.source, spec.entry, "kernel.cu");
    run.launch = variant.launch;
    EXPECT_TRUE(run.ok()) << run.kernel.error;
    const unsigned block = spec.default_block_size;
    auto work = gi::fitness::prepare_workload(spec, gi::emulated_training_workloads(spec).at(training_workload), 0,
                                              std::nullopt, block);
    return gi::emulate_workload(emulator, run, spec, work, block).check.status;
  }

  std::filesystem::path dir_;
};

}  // namespace gi::test
