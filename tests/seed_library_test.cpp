// The kernel library as a whole (issue: the full registration kernel
// library): at least 30 seeds covering every family, each with a complete
// spec whose generator and reference are registered, unique entry names.
// Parsing, grammar round trips and mutant compile rates are checked per seed
// by GrammarParser.SeedsParse, GrammarText.RoundTripOnSampleAndEverySeed and
// MutantCompileRate.*, which run over the same seed list.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fitness/kernel_spec.hpp"
#include "gi/seed_library.hpp"
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
