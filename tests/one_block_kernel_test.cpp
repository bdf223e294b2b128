// gi init on a kernel that reads no block index (analysis/block_index_use.hpp):
// every block would do the same work, so the spec launches one; and the
// block sizes a static __shared__ array of the kernel can hold
// (gi/seed/block_size_choice.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/spec_scaffold.hpp"

namespace gi {
namespace {

using json = nlohmann::json;

json draft(const std::string& source, std::vector<std::string> sizes, SpecScaffold* out = nullptr) {
  SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes(sizes, {}));
  if (out) *out = s;
  return json::parse(s.spec.dump());
}

bool any_contains(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

// NiftyReg's ReduceRigidSums in small: a block-stride loop, then a sum over
// the block in shared memory, written out by thread 0.
const std::string kBlockSum =
    "constexpr int kThreads = 256;\n"
    "__global__ void block_sum(const float* x, int n, float* total) {\n"
    "  __shared__ float partial[kThreads];\n"
    "  float s = 0.f;\n"
    "  for (int k = threadIdx.x; k < n; k += blockDim.x) s += x[k];\n"
    "  partial[threadIdx.x] = s;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    float t = 0.f;\n"
    "    for (int j = 0; j < blockDim.x; ++j) t += partial[j];\n"
    "    total[0] = t;\n"
    "  }\n"
    "}\n";

TEST(OneBlockKernel, AKernelReadingNoBlockIndexIsOneBlockOfTheSizesItsSharedArrayHolds) {
  SpecScaffold s;
  const json spec = draft(kBlockSum, {"n=100000"}, &s);
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["launch"]["grid"], json::array({1, 1, 1}));
  EXPECT_EQ(spec["parameters"][0]["count"], "n");
  EXPECT_EQ(spec["parameters"][2]["count"], "1");
  // partial[threadIdx.x] and partial[j], j < blockDim.x: B elements of 256.
  EXPECT_EQ(spec["tunables"]["block_sizes"], json::array({64, 128, 256}));
  EXPECT_EQ(spec["tunables"]["default_block_size"], 256);
  EXPECT_TRUE(any_contains(s.inferred, "grid: one block (the kernel reads neither blockIdx nor gridDim"));
  EXPECT_TRUE(any_contains(s.inferred, "__shared__ partial[256] (line 3) needs B elements")) << s.inferred.size();
  // The draft loads as a spec.
  EXPECT_NO_THROW(fitness::parse_kernel_spec(spec, "spec.json", kBlockSum, "k.cu", {.registry = false}));
}

TEST(OneBlockKernel, ABlockIndexInAMacroOrAHelperKeepsTheGridToTheUser) {
  // Through a macro: gi cannot tell where it is expanded.
  std::string via_macro = kBlockSum;
  via_macro.replace(via_macro.find("k = threadIdx.x;"), 16, "k = threadIdx.x + FIRST;");
  via_macro = "#define FIRST (blockIdx.x * 0)\n" + via_macro;
  json spec = draft(via_macro, {"n=100000"});
  ASSERT_TRUE(spec["launch"]["grid"][0].is_string());
  EXPECT_NE(spec["launch"]["grid"][0].get<std::string>().find("line 1: a macro reads the block index"), std::string::npos)
      << spec["launch"]["grid"][0];
  // Through a __device__ function the kernel calls.
  std::string via_helper = kBlockSum;
  via_helper.replace(via_helper.find("s += x[k];"), 10, "s += x[k] * weight();");
  via_helper = "__device__ float weight() { return blockIdx.x + 1.f; }\n" + via_helper;
  spec = draft(via_helper, {"n=100000"});
  EXPECT_TRUE(spec["launch"]["grid"][0].is_string()) << spec["launch"]["grid"];
  // Through a name the file does not declare: a header's, which may be either.
  std::string via_header = kBlockSum;
  via_header.replace(via_header.find("s += x[k];"), 10, "s += scaled(x[k]);");
  spec = draft(via_header, {"n=100000"});
  ASSERT_TRUE(spec["launch"]["grid"][0].is_string());
  EXPECT_NE(spec["launch"]["grid"][0].get<std::string>().find("'scaled' (line 5), which this file does not declare"),
            std::string::npos)
      << spec["launch"]["grid"][0];
}

// Rodinia's particle filter sums its partial sums in the grid's first thread:
// the global index is read only in `i == 0`, so one block does the work.
const std::string kFirstThread =
    "const int threads_per_block = 512;\n"
    "__global__ void sum_kernel(double* partial_sums, int n) {\n"
    "  int block_id = blockIdx.x;\n"
    "  int i = blockDim.x * block_id + threadIdx.x;\n"
    "  if (i == 0) {\n"
    "    double sum = 0.0;\n"
    "    int num_blocks = ceil((double) n / (double) threads_per_block);\n"
    "    for (int x = 0; x < num_blocks; x++) sum += partial_sums[x];\n"
    "    partial_sums[0] = sum;\n"
    "  }\n"
    "}\n";

TEST(OneBlockKernel, AKernelReadingTheBlockIndexOnlyToPickTheFirstThreadIsOneBlock) {
  SpecScaffold s;
  const json spec = draft(kFirstThread, {"n=1000000"}, &s);
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["launch"]["grid"], json::array({1, 1, 1}));
  EXPECT_EQ(spec["parameters"][0]["count"], "ceil_div(n, 512)");
  EXPECT_TRUE(any_contains(s.inferred, "reads the block index only in 'i', the global index, which line 5 compares with 0"));
  // 16 M values of ceil_div(n, 512) would take n past an int: the held-out
  // sizes grow as far as an int holds, and gi init says they fall short.
  double largest = 0;
  for (const auto& w : spec["workloads"]["validate"]) largest = std::max(largest, w["variables"]["n"].get<double>());
  EXPECT_LE(largest, 2147483647.0);
  EXPECT_GT(largest, 1.0e9);
  EXPECT_TRUE(any_contains(s.notes, "fewer than the 16000000 that publishing a result asks for")) << s.notes.size();
  // Where the block index means more, the grid stays the user's:
  const auto refused = [](std::string source, const std::string& from, const std::string& to) {
    source.replace(source.find(from), from.size(), to);
    return draft(source, {"n=1000000"})["launch"]["grid"][0].is_string();
  };
  // another thread than the first (block 1's thread 0 when B = 1, ...),
  EXPECT_TRUE(refused(kFirstThread, "i == 0", "i == 1"));
  // the global index read elsewhere,
  EXPECT_TRUE(refused(kFirstThread, "partial_sums[0] = sum;", "partial_sums[0] = sum + i;"));
  // a local that is no global index (thread k of block k: one per block),
  EXPECT_TRUE(refused(kFirstThread, "blockDim.x * block_id + threadIdx.x", "threadIdx.x - block_id"));
  // blockIdx read outside the locals, or a 2-D block.
  EXPECT_TRUE(refused(kFirstThread, "double sum = 0.0;", "double sum = blockIdx.x;"));
  EXPECT_TRUE(refused(kFirstThread, "double sum = 0.0;", "double sum = threadIdx.y;"));
}

TEST(OneBlockKernel, ATwoDimensionalBlockIsNotOneBlockOfBThreads) {
  std::string tile = kBlockSum;
  tile.replace(tile.find("partial[threadIdx.x] = s;"), 25, "partial[threadIdx.x] = s + threadIdx.y;");
  const json spec = draft(tile, {"n=100000"});
  EXPECT_TRUE(spec["launch"]["grid"][0].is_string()) << spec["launch"]["grid"];
}

TEST(OneBlockKernel, AStaticSharedArrayCapsTheBlockSizesOfAnyKernel) {
  const std::string source =
      "#define TILE 128\n"
      "__global__ void twice(const float* x, float* y, int n) {\n"
      "  __shared__ float tile[TILE];\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    tile[threadIdx.x] = x[i];\n"
      "    y[i] = 2.f * tile[threadIdx.x];\n"
      "  }\n"
      "}\n";
  SpecScaffold s;
  const json spec = draft(source, {"n=5000"}, &s);
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["launch"]["grid"][0], "ceil_div(n, B)");
  EXPECT_EQ(spec["tunables"]["block_sizes"], json::array({64, 128}));
  EXPECT_EQ(spec["tunables"]["default_block_size"], 128);
  // Smaller than any block size gi tunes: the user decides.
  std::string tiny = source;
  tiny.replace(tiny.find("TILE 128"), 8, "TILE 32");
  const json refused = draft(tiny, {"n=5000"});
  ASSERT_TRUE(refused["tunables"]["block_sizes"].is_string());
  EXPECT_NE(refused["tunables"]["block_sizes"].get<std::string>().find("keeps __shared__ tile[32] (line 3) within"),
            std::string::npos)
      << refused["tunables"]["block_sizes"];
  // An index gi cannot bound: a note, and the usual sizes.
  std::string unbounded = source;
  unbounded.replace(unbounded.find("y[i] = 2.f * tile[threadIdx.x];"), 31, "y[i] = 2.f * tile[(int)x[i]];");
  SpecScaffold u;
  const json noted = draft(unbounded, {"n=5000"}, &u);
  EXPECT_EQ(noted["tunables"]["block_sizes"], json::array({64, 128, 256, 512, 1024}));
  EXPECT_TRUE(any_contains(u.notes, "gi could not bound the indices of __shared__ tile[128] (line 3)"));
}

// The tree of a block reduction: `tid < s` where s <= B/2 bounds tid + s by
// 2s - 1 < B, so an array of 256 holds blocks of 256 (not only the 1.5 B
// that bounding tid and s apart would give).
TEST(OneBlockKernel, ATreeReductionsPartnerIndexStaysBelowTheBlockSize) {
  for (const std::string tid : {"tid", "threadIdx.x"}) {
    const std::string source =
        "__global__ void tree_sum(const float* x, int n, float* total) {\n"
        "  __shared__ float red[256];\n"
        "  const unsigned tid = threadIdx.x;\n"
        "  float s = 0.f;\n"
        "  for (int k = threadIdx.x; k < n; k += blockDim.x) s += x[k];\n"
        "  red[tid] = s;\n"
        "  __syncthreads();\n"
        "  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {\n"
        "    if (" + tid + " < h) red[" + tid + "] += red[" + tid + " + h];\n"
        "    __syncthreads();\n"
        "  }\n"
        "  if (tid == 0) total[0] = red[0];\n"
        "}\n";
    SpecScaffold s;
    const json spec = draft(source, {"n=100000"}, &s);
    EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << tid << spec.dump(2);
    EXPECT_EQ(spec["tunables"]["block_sizes"], json::array({64, 128, 256})) << tid;
    // B / 2 is a floor to gi: 2 * ceil_div(B + 1, 2) - 2 is B - 1 or B - 2.
    EXPECT_TRUE(any_contains(s.inferred, "block sizes up to 256 (__shared__ red[256] (line 2) needs max(B, 2 * "
                                         "ceil_div(B + 1, 2) - 2) elements"))
        << tid << s.inferred.size();
  }
  // Without the guard the partner index reaches 1.5 B: 256 is dropped.
  const std::string unguarded =
      "__global__ void tree_sum(const float* x, int n, float* total) {\n"
      "  __shared__ float red[256];\n"
      "  red[threadIdx.x] = x[threadIdx.x];\n"
      "  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) red[threadIdx.x] += red[threadIdx.x + h];\n"
      "  total[0] = red[0];\n"
      "}\n";
  EXPECT_EQ(draft(unguarded, {"n=100000"})["tunables"]["block_sizes"], json::array({64, 128}));
}

// A guard on the thread's number bounds it: `threadIdx.x < 9` indexes 9
// elements whatever the block size.
TEST(OneBlockKernel, AGuardOnTheThreadsNumberBoundsASharedIndex) {
  const std::string source =
      "__global__ void weights(const float* x, float* y, int n) {\n"
      "  __shared__ float w[9];\n"
      "  if (threadIdx.x < 9) w[threadIdx.x] = 0.5f * threadIdx.x;\n"
      "  __syncthreads();\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = x[i] * w[i % 9];\n"
      "}\n";
  const json spec = draft(source, {"n=5000"});
  EXPECT_EQ(spec["tunables"]["block_sizes"], json::array({64, 128, 256, 512, 1024})) << spec.dump(2);
}

}  // namespace
}  // namespace gi
