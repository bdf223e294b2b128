// An index whose lowest value only sizes keep >= 0 (NiftyReg's joint
// histogram smoothing: `hist[finish - 2]`, finish = (row + 1) * bins, so
// bins >= 2): gi init counts the buffer and makes bins - 2 >= 0 a fact
// every workload keeps (analysis::PointerUse::SizeNeed::lowest_index),
// and refuses given sizes that break it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "parameter_use_support.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;

const char* const kSmooth =
    "__global__ void smooth(const float* hist, float* out, int bins, int rows) {\n"
    "  const int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (row < rows) {\n"
    "    const int start = row * bins;\n"
    "    const int finish = start + bins;\n"
    "    out[start] = hist[start] + hist[start + 1];\n"
    "    for (int i = start + 1; i < finish - 1; ++i) out[i] = hist[i - 1] + hist[i] + hist[i + 1];\n"
    "    out[finish - 1] = hist[finish - 2] * hist[finish - 2] + hist[finish - 1];\n"
    "  }\n"
    "}\n";

TEST(LowestIndex, SizesThatKeepItAtLeastZeroAreAFact) {
  const auto u = test::use_of(kSmooth);
  const auto& hist = test::pointer(u, "hist");
  ASSERT_TRUE(hist.count) << hist.refusal;
  // One fact per access that reaches below (hist[finish - 2] twice).
  ASSERT_EQ(hist.size_needs.size(), 2u);
  for (const auto& need : hist.size_needs) {
    EXPECT_TRUE(need.lowest_index);
    ASSERT_TRUE(need.at_least_zero);
    EXPECT_EQ(need.at_least_zero->text(), "bins - 2");
    EXPECT_NE(need.evidence.find("line 8: hist[finish - 2] reaches down to bins - 2"), std::string::npos)
        << need.evidence;
  }
  // At bins = 2 the buffer holds what the rows read: bins * rows.
  EXPECT_EQ(hist.count->evaluate({{"bins", 2}, {"rows", 10}}), 20);
  EXPECT_EQ(test::count(u, "out"), "bins * rows");
  EXPECT_TRUE(test::pointer(u, "out").size_needs.empty());
}

TEST(LowestIndex, ANegativeNumberNoSizeChangesIsRefused) {
  // in[i - 1] at i = 0 reads before the buffer whatever the sizes.
  const auto u = test::use_of(
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = in[i - 1];\n"
      "}\n");
  EXPECT_EQ(test::count(u, "in"), "none: line 3: the index 'i - 1' may be negative");
  EXPECT_TRUE(test::pointer(u, "in").size_needs.empty());
  // n - 2 * m: a tie between two sizes gi leaves to the user.
  const auto tie = test::use_of(
      "__global__ void k(const float* in, float* out, int n, int m) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = in[i + n - 2 * m];\n"
      "}\n");
  EXPECT_EQ(test::count(tie, "in").rfind("none: ", 0), 0u) << test::count(tie, "in");
}

TEST(LowestIndex, GiInitRefusesSizesThatBreakItAndDraftsWorkloadsThatKeepIt) {
  const fs::path root = fs::temp_directory_path() / ("gi-lowest-index-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "smooth.cu") << kSmooth;
  const std::string init = "init \"" + (root / "smooth.cu").string() + "\" --out \"" + (root / "seed").string() + "\"";
  const test::CommandOutput refused = test::run_gi(init + " --size bins=1 --size rows=1000");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("the sizes given make an index negative (line 8: hist[finish - 2] reaches down to "
                                "bins - 2"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("give sizes where bins - 2 >= 0"), std::string::npos) << refused.output;
  const test::CommandOutput made = test::run_gi(init + " --size bins=16 --size rows=1000 --force");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_NE(made.output.find("(0 fields to fill)"), std::string::npos) << made.output;
  // Listed once, though two accesses give it.
  const std::size_t listed = made.output.find("inferred: sizes: bins - 2 >= 0 on every workload");
  EXPECT_NE(listed, std::string::npos) << made.output;
  EXPECT_EQ(made.output.find("inferred: sizes:", listed + 1), std::string::npos) << made.output;
  std::ifstream in(root / "seed/spec.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  std::vector<nlohmann::json> workloads = {spec["workloads"]["train"]};
  for (const auto& w : spec["workloads"]["train_checks"]) workloads.push_back(w);
  for (const auto& w : spec["workloads"]["validate"]) workloads.push_back(w);
  EXPECT_EQ(workloads.size(), 7u);
  for (const auto& w : workloads) EXPECT_GE(w["variables"]["bins"].get<double>(), 2) << w.dump();
  fs::remove_all(root);
}

// A shared array's index binds the sizes too: the fact is kept for every
// memory the kernel reads, not only its parameters' buffers.
TEST(LowestIndex, ASharedArraysIndexBindsTheSizesToo) {
  const fs::path root = fs::temp_directory_path() / ("gi-lowest-shared-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "k.cu") << "__global__ void k(const float* in, float* out, int bins, int n) {\n"
                                  "  __shared__ float s[256];\n"
                                  "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "  s[threadIdx.x] = 0.f;\n"
                                  "  __syncthreads();\n"
                                  "  if (i < n) out[i] = in[i] + s[bins - 2];\n"
                                  "}\n";
  const test::CommandOutput refused = test::run_gi("init \"" + (root / "k.cu").string() + "\" --out \"" +
                                                   (root / "seed").string() + "\" --size bins=1 --size n=1000");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("the sizes given make an index negative (line 6: s[bins - 2] reaches down to bins - 2"),
            std::string::npos)
      << refused.output;
  fs::remove_all(root);
}

}  // namespace
}  // namespace gi
