// `gi plain` (gi/seed/plain_seed.hpp): a library seed's plain form is its
// kernel at the default switch setting with the paths removed (the file
// tests/data/plain holds for it), a spec without switches whose launch is
// the default setting's, and a seed gi loads, checks and transforms.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <random>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "grammar/edit_family.hpp"
#include "gi/seed/plain_seed.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

class PlainSeed : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gi-plain-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PlainSeed, IsTheDefaultPathWithoutSwitchesAndLaunchesAsTheSeedDoes) {
  for (const std::string name : {"similarity/nmi_joint_histogram", "tools/intensity_minmax"}) {
    const gi::Seed library = gi::load_seed(gi::test::source_dir() / "seeds" / name);
    const fs::path plain_dir = gi::write_plain_seed(library, dir_);
    EXPECT_EQ(plain_dir, dir_ / name);
    std::string flat = name;
    flat[flat.find('/')] = '_';
    EXPECT_EQ(gi::read_text_file(plain_dir / "kernel.cu"),
              gi::read_text_file(fs::path(GI_TEST_DATA) / "plain" / (flat + ".cu")))
        << name;
    const gi::Seed plain = gi::load_seed(plain_dir);
    EXPECT_TRUE(plain.context.switches.empty()) << name;
    EXPECT_EQ(plain.source.find("#if"), std::string::npos) << name;
    // The same launch as the library seed at its default setting, on the training workload's shape.
    const auto spec = gi::fitness::load_kernel_spec(plain_dir / "spec.json");
    const auto library_spec = gi::fitness::load_kernel_spec(library.dir / "spec.json");
    EXPECT_TRUE(spec.switch_defaults.empty()) << name;
    const auto v = gi::fitness::prepare_workload(library_spec, "train:1", 0, std::nullopt, 128).variables;
    const auto a = gi::fitness::launch_plan_shape(spec, v, 128);
    const auto b = gi::fitness::launch_plan_shape(library_spec, v, 128);
    EXPECT_EQ(a.grid, b.grid) << name;
    EXPECT_EQ(a.dynamic_shared_bytes, b.dynamic_shared_bytes) << name;
    // The transformation families see the same sites.
    for (const char* family : {"aggregate", "privatise"})
      EXPECT_EQ(gi::grammar::edit_family(family).candidates(plain.grammar, plain.context).size(),
                gi::grammar::edit_family(family).candidates(library.grammar, library.context).size())
          << name << " " << family;
  }
  EXPECT_THROW(gi::write_plain_seed(gi::load_seed(gi::test::source_dir() / "seeds/tools/intensity_minmax"), dir_),
               std::runtime_error);  // there already
}

}  // namespace
