// The kernel library as a whole (issue: the full registration kernel
// library): at least 30 seeds covering every family, each with a complete
// spec whose generator and reference are registered, unique entry names.
// Parsing, grammar round trips and mutant compile rates are checked per seed
// by GrammarParser.SeedsParse, GrammarText.RoundTripOnSampleAndEverySeed and
// MutantCompileRate.*, which run over the same seed list.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/library/seed_library.hpp"
#include "gi/publish/validation.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

TEST(SeedLibrary, AtLeast30SeedsCoveringEveryFamily) {
  const auto dirs = find_seed_dirs(test::source_dir() / "seeds");
  EXPECT_GE(dirs.size(), 30u);
  std::set<std::string> families;
  for (const auto& d : dirs) families.insert(d.parent_path().filename().string());
  for (const char* f : {"global", "bspline", "deformation", "resampling", "similarity", "tools", "optimiser",
                        "blockmatching"})
    EXPECT_TRUE(families.count(f)) << "no seed in family " << f;
  EXPECT_EQ(dirs.size(), test::seed_dirs().size());
}

TEST(SeedLibrary, EverySpecIsCompleteAndEntriesAreUnique) {
  std::map<std::string, std::string> entries;
  for (const auto& dir : test::seed_dirs()) {
    SCOPED_TRACE(dir.string());
    // Loading checks every field, that the generators and the reference are
    // registered, and that the family is the folder's.
    const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
    EXPECT_FALSE(spec.work_item.empty());
    EXPECT_FALSE(spec.tolerance_note.empty());
    EXPECT_NE(spec.min_bytes.text(), "0") << "min_bytes missing";
    EXPECT_GE(spec.validate.size(), 5u);
    EXPECT_FALSE(spec.block_sizes.empty());
    const auto [it, fresh] = entries.emplace(spec.entry, dir.string());
    EXPECT_TRUE(fresh) << "entry " << spec.entry << " also in " << it->second;
  }
}

// Validation rejects a winner whose held-out set is smaller than this
// (gi/publish/validation.hpp): a seed whose spec is short of it can never publish.
// Counted from the generated inputs and the output buffers' sizes, without
// references, over the seeds in parallel, so the whole library fits in CI.
TEST(SeedLibrary, EveryHeldOutSetHoldsTheValuesValidationRequires) {
  const std::vector<std::filesystem::path> dirs = test::seed_dirs();
  std::vector<std::string> short_of(dirs.size());
  std::atomic<std::size_t> next{0};
  auto count = [&] {
    for (std::size_t i; (i = next++) < dirs.size();) {
      const fitness::KernelSpec spec = fitness::load_kernel_spec(dirs[i]);
      std::size_t inputs = 0, outputs = 0;
      for (const fitness::WorkloadSpec& w : spec.validate) {
        const fitness::LaunchPlan plan =
            fitness::build_launch_plan(spec, fitness::generate_workload(spec, w, w.seed), spec.default_block_size);
        inputs += fitness::input_values(plan);
        for (const fitness::BufferArg& b : plan.buffers)
          if (b.role != fitness::ParamRole::In) outputs += b.count * fitness::element_components(b.type);
      }
      if (outputs < kMinValidationValues && inputs < kMinValidationValues)
        short_of[i] = dirs[i].string() + ": held-out outputs " + std::to_string(outputs) + ", inputs " +
                      std::to_string(inputs) + "; " + std::to_string(kMinValidationValues) + " of either are required";
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(2u, std::min(4u, std::thread::hardware_concurrency())); ++t) threads.emplace_back(count);
  for (std::thread& t : threads) t.join();
  for (const std::string& s : short_of) EXPECT_TRUE(s.empty()) << s;
}

TEST(SeedLibrary, TableNamesEveryKernelWithItsFloor) {
  fitness::KernelSpec spec = fitness::load_kernel_spec(test::seed_dirs()[0]);
  LibraryEntry e;
  e.name = "bspline/deformation_field";
  e.spec = spec;
  e.threads = 2e6;
  e.output_values = 8e6;
  e.min_bytes = 4.2e7;
  const std::string table = library_table({e}, 4200);
  EXPECT_NE(table.find("deformation_field"), std::string::npos) << table;
  EXPECT_NE(table.find("active voxel"), std::string::npos) << table;
  EXPECT_NE(table.find("10.00"), std::string::npos) << table;  // 42 MB at 4.2 TB/s = 10 us
  EXPECT_NEAR(e.to_json(4200).at("memory_floor_us").get<double>(), 10.0, 1e-9);
}

}  // namespace
}  // namespace gi
