// gi init compiles its draft on a compile server (gi/seed/seed_compiles.*):
// NVRTC 13 crashes on some files (a template kernel whose parameter type
// nothing declares, compiled as an instance), and gi init must report that,
// keep the draft and exit, not die with it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;

TEST(SeedCompiles, ANvrtcCrashIsTheDraftsProblemNotGiInits) {
  const fs::path root = fs::temp_directory_path() / ("gi-nvrtc-crash-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  // `uchar` is declared nowhere: NVRTC 13.0 dies with a segmentation fault on `k<float>`.
  std::ofstream(root / "crash.cu") << "template<class T> __global__ void k(uchar* d, const T* s, int n) {\n"
                                      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                      "  if (i < n) d[i] = s[i];\n"
                                      "}\n";
  const test::CommandOutput init = test::run_gi("init \"" + (root / "crash.cu").string() + "\" --entry 'k<float>' --out \"" +
                                                (root / "seed").string() + "\" --size n=1000");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  // Whatever NVRTC does with the file (a crash, or an error in a later
  // release), the draft is reported as not compiling, and it is kept.
  EXPECT_NE(init.output.find("problem: "), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("does not compile with NVRTC"), std::string::npos) << init.output;
  EXPECT_TRUE(fs::exists(root / "seed/spec.json"));
  EXPECT_TRUE(fs::exists(root / "seed/kernel.cu"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace gi
