// gi/library/library_root.hpp: where gi finds its library (GI_LIBRARY, an
// installed prefix beside the executable, a checkout above it), and an
// installed gi that keeps working after its prefix has moved. CPU only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "gi/library/library_root.hpp"
#include "gi/library/seed_library.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

class LibraryRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gi-library-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A folder laid out as a library: seeds/ and scripts/report/gi_report.py.
  static void make_library(const fs::path& root) {
    fs::create_directories(root / "seeds/tools/k");
    fs::create_directories(root / "scripts/report");
    std::ofstream(root / "scripts/report/gi_report.py") << "# report\n";
  }

  fs::path dir_;
};

TEST_F(LibraryRoot, AnInstalledPrefixIsFoundBesideTheExecutable) {
  make_library(dir_ / "prefix/share/gi");
  fs::create_directories(dir_ / "prefix/bin");
  const auto l = gi::find_library(dir_ / "prefix/bin/gi", nullptr);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->root, (dir_ / "prefix/share/gi").lexically_normal());
  EXPECT_EQ(l->found_by, "installed beside the executable");
  EXPECT_EQ(l->seeds(), l->root / "seeds");
  EXPECT_EQ(l->report_script(), l->root / "scripts/report/gi_report.py");
}

TEST_F(LibraryRoot, ACheckoutIsFoundAboveTheExecutable) {
  make_library(dir_ / "checkout");
  fs::create_directories(dir_ / "checkout/build/gi");
  const auto l = gi::find_library(dir_ / "checkout/build/gi/gi", nullptr);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->root, (dir_ / "checkout").lexically_normal());
  EXPECT_EQ(l->found_by, "a checkout above the executable");
}

TEST_F(LibraryRoot, GiLibraryWinsAndAWrongOneIsAnError) {
  make_library(dir_ / "checkout");
  make_library(dir_ / "other");
  const auto l = gi::find_library(dir_ / "checkout/gi", (dir_ / "other").c_str());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->root, (dir_ / "other").lexically_normal());
  EXPECT_EQ(l->found_by, "GI_LIBRARY");
  try {
    gi::find_library(dir_ / "checkout/gi", (dir_ / "nowhere").c_str());
    FAIL() << "a GI_LIBRARY without seeds/ must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("GI_LIBRARY=" + (dir_ / "nowhere").string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no seeds/"), std::string::npos) << e.what();
  }
}

TEST_F(LibraryRoot, NothingFoundListsWhereItLooked) {
  fs::create_directories(dir_ / "bin");
  std::vector<std::string> looked_at;
  EXPECT_FALSE(gi::find_library(dir_ / "bin/gi", nullptr, &looked_at).has_value());
  ASSERT_GE(looked_at.size(), 2u);
  EXPECT_EQ(looked_at[0], (dir_ / "share/gi").string());
  EXPECT_EQ(looked_at[1], (dir_ / "bin").string());
}

// `cmake --install` into a prefix, the prefix moved, and gi run from another
// working directory: it names the moved library, lists every seed and
// compiles a library seed's mutants by name.
TEST_F(LibraryRoot, AnInstalledGiWorksAfterItsPrefixHasMoved) {
  const fs::path first = dir_ / "first", moved = dir_ / "moved", elsewhere = dir_ / "elsewhere";
  const std::string install = std::string("\"") + GI_CMAKE_COMMAND + "\" --install \"" + GI_BUILD_DIR +
                              "\" --prefix \"" + first.string() + "\" > \"" + (dir_ / "install.log").string() + "\" 2>&1";
  ASSERT_EQ(std::system(install.c_str()), 0) << gi::read_text_file(dir_ / "install.log");
  fs::rename(first, moved);
  fs::create_directories(elsewhere);
  const std::string gi = (moved / "bin/gi").string();
  auto run = [&](const std::string& args) {
    return gi::test::run_command("cd \"" + elsewhere.string() + "\" && env -u GI_LIBRARY \"" + gi + "\" " + args);
  };

  const auto doctor = run("doctor");
  EXPECT_NE(doctor.output.find("library:       " + (moved / "share/gi").string() + " (installed beside the executable"),
            std::string::npos)
      << doctor.output;

  const auto list = run("list --json --cache ''");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const nlohmann::json kernels = nlohmann::json::parse(list.output);
  EXPECT_EQ(kernels.size(), gi::find_seed_dirs(gi::test::source_dir() / "seeds").size());

  const auto mutants = run("mutants bspline/deformation_field --count 4 --jobs 2");
  ASSERT_EQ(mutants.exit_code, 0) << mutants.output;
  EXPECT_NE(mutants.output.find((moved / "share/gi/seeds/bspline/deformation_field").string()), std::string::npos)
      << mutants.output;
  // Nothing was written into the installed library.
  for (const auto& e : fs::recursive_directory_iterator(moved / "share/gi"))
    EXPECT_FALSE(e.path().filename() == ".gi-cache" || e.path().extension() == ".html") << e.path();
}

}  // namespace
