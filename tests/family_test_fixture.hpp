#pragma once
// What the transformation families' tests (aggregate, privatise,
// warp_per_item, merge_runs, scatter_cache) share: a scratch folder per
// test, `gi emulate SEED --patch EDIT` on a variant, and an NVRTC compile of
// a patched source.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "tests/test_support.hpp"

namespace gi::test {

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

  std::filesystem::path dir_;
};

}  // namespace gi::test
