// gi init's index arithmetic (analysis/parameter_use.cpp, Analyser::arithmetic):
// sizes are at least 1, so a factor or a dividend such as `m - 1` is at least
// 0 as `m` is; a range subtracted gives the least result from its largest
// value. What may be negative is still refused, with its reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "parameter_use_support.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

using test::count;
using test::use_of;

TEST(IndexArithmetic, AFactorOfASizeLessOneIsAtLeastZero) {
  // The last row of an m-row image (NiftyReg's joint histogram smoothing
  // writes `(bins - 1) * ...`).
  const auto u = use_of(
      "__global__ void k(float* out, int n, int m) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[(m - 1) * n + i] = 1.f;\n"
      "}\n");
  EXPECT_EQ(count(u, "out"), "m * n");
}

TEST(IndexArithmetic, AHalfWindowIsAQuotientOfASizeLessOne) {
  // `radius = (windowSize - 1) / 2`, as a convolution writes it.
  const auto u = use_of(
      "__global__ void k(const float* in, float* out, int n, int w) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int radius = (w - 1) / 2;\n"
      "  if (i < n) out[i] = in[i + radius];\n"
      "}\n");
  EXPECT_EQ(count(u, "out"), "n");
  EXPECT_EQ(count(u, "in"), "ceil_div(w, 2) + n - 1");
}

TEST(IndexArithmetic, MinusARangeTakesItsLargestValueForTheLeast) {
  const auto u = use_of(
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[n - 1 - i] = in[i];\n"
      "}\n");
  EXPECT_EQ(count(u, "out"), "n");
  // Minus a loop counter's range from the index: below zero on the first
  // threads, which gi must not take for a count.
  const auto back = use_of(
      "__global__ void k(const float* in, float* out, int n, int taps) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    float s = 0.f;\n"
      "    for (int t = 0; t < taps; ++t) s += in[i - t];\n"
      "    out[i] = s;\n"
      "  }\n"
      "}\n");
  EXPECT_NE(count(back, "in").find("none: "), std::string::npos) << count(back, "in");
  EXPECT_NE(count(back, "in").find("negative"), std::string::npos) << count(back, "in");
}


// `float* a = &f[i];` is an alias as `a = f + i` is, and so is an alias of
// it; a store through one (`*a = v`) writes. Any other use of an element's
// address is refused: where it is read or written is unknown.
TEST(IndexArithmetic, AnElementsAddressIsAnAliasOrARefusal) {
  const auto u = test::use_of(
      "__global__ void k(float* f, int n, int m) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    float* a = &f[i];\n"
      "    float* b = &a[m];\n"
      "    *a = 1.f;\n"
      "    *b = 2.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(u, "f"), "m + n");
  EXPECT_TRUE(test::pointer(u, "f").written);
  EXPECT_FALSE(test::pointer(u, "f").read);
  // Handed to a __device__ helper: the helper's accesses, i further in.
  const auto handed = test::use_of(
      "__device__ void put(float* p) { p[3] = 1.f; }\n"
      "__global__ void k(float* f, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) put(&f[i]);\n"
      "}\n");
  EXPECT_EQ(test::count(handed, "f"), "n + 3");
  const auto escapes = test::use_of(
      "__global__ void k(float* f, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  float* q;\n"
      "  if (i < n) { q = &f[i]; q[1] = 1.f; }\n"
      "}\n");
  EXPECT_EQ(test::count(escapes, "f"),
            "none: line 4: its element's address is taken (&f[i]), and gi does not follow where it is used");
}

// `float* q = p;` and NiftyReg's parenthesised `float *q = (p);` name the
// buffer again: q's accesses are p's. A copy that is then pointed elsewhere
// is refused as any other pointer assignment is.
TEST(IndexArithmetic, APlainCopyOfAPointerIsTheBufferUnderAnotherName) {
  const auto u = test::use_of(
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const float* src = (in);\n"
      "  float* dst = out;\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) dst[i] = 2.f * src[i + 1];\n"
      "}\n");
  EXPECT_EQ(test::count(u, "in"), "n + 1");
  EXPECT_EQ(test::count(u, "out"), "n");
  EXPECT_TRUE(test::pointer(u, "in").read);
  EXPECT_FALSE(test::pointer(u, "in").written);
  EXPECT_TRUE(test::pointer(u, "out").written);
  EXPECT_FALSE(test::pointer(u, "out").read);
  const auto moved = test::use_of(
      "__global__ void k(float* out, float* other, int n) {\n"
      "  float* dst = out;\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) { dst = other; dst[i] = 1.f; }\n"
      "}\n");
  EXPECT_NE(test::count(moved, "out").find("none: line 4: 'dst' is used as a pointer"), std::string::npos)
      << test::count(moved, "out");
}

}  // namespace
}  // namespace gi


namespace gi {
namespace {

// Two accesses whose needs no size ordering decides: the buffer holds both,
// max(n, m), which the spec's expressions evaluate.
TEST(IndexArithmetic, NeedsNeitherOfWhichIsProvablyLargerGiveTheirMaximum) {
  const std::string source =
      "__global__ void k(float* out, int n, int m) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = 0.f;\n"
      "  if (i < m) out[i] += 1.f;\n"
      "}\n";
  EXPECT_EQ(test::count(test::use_of(source), "out"), "max(n, m)");
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=5000", "m=3000"}, {}));
  const nlohmann::json spec = nlohmann::json::parse(s.spec.dump());
  ASSERT_EQ(spec["parameters"][0]["count"], "max(n, m)") << spec.dump(2);
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", source, "k.cu", {.registry = false});
  const fitness::Workload w = fitness::generate_workload(k, k.train, 1);
  EXPECT_EQ(fitness::build_launch_plan(k, w, 256).buffers[0].count, 5000u);
}

}  // namespace
}  // namespace gi

namespace gi {
namespace {

// A clamp written as statements, `int l = i - 1; if (l < 0) l = 0;`, and a
// boundary chosen by if/else are one conditional value
// (analysis/straight_line_value.hpp): each side bounded under what its
// condition says, the value before the if under what its failing says.
TEST(IndexArithmetic, ClampsWrittenAsStatementsBoundTheIndex) {
  const auto stencil = test::use_of(
      "__global__ void k(const float* in, float* out, int nx, int ny) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
      "  if (x >= nx || y >= ny) return;\n"
      "  int xp;\n"
      "  if (x < nx - 1) xp = x + 1; else xp = x;\n"
      "  int xm = x - 1;\n"
      "  if (xm < 0) { xm = 0; }\n"
      "  out[y * nx + x] = in[y * nx + xp] - in[y * nx + xm];\n"
      "}\n");
  EXPECT_EQ(test::count(stencil, "in"), "nx * ny");
  // Clamped from above only: the largest value the failing test leaves, n.
  const auto above = test::use_of(
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    int j = i + 5;\n"
      "    if (j > n) j = n - 1;\n"
      "    out[i] = in[j];\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(above, "in"), "n + 1");
  // A guard's lower bound on its own: `if (l >= 0)` before in[l].
  const auto guarded = test::use_of(
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    const int l = i - 1;\n"
      "    if (l >= 0) out[i] = in[l];\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(guarded, "in"), "n - 1");
  // Without the clamp the index may be -1: refused.
  const auto unclamped = test::use_of(
      "__global__ void k(const float* in, float* out, int n, bool b) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    int l = i - 1;\n"
      "    if (b) l = 0;\n"
      "    out[i] = in[l];\n"
      "  }\n"
      "}\n");
  EXPECT_NE(test::count(unclamped, "in").find("negative"), std::string::npos) << test::count(unclamped, "in");
  // A clamped value loaded from memory is still an index from loaded data.
  const auto loaded = test::use_of(
      "__global__ void k(const float* in, const int* idx, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    int j = idx[i];\n"
      "    if (j < 0) j = 0;\n"
      "    out[i] = in[j];\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(test::count(loaded, "in"), "none: line 6: its index 'j' is computed from loaded data");
  EXPECT_TRUE(test::pointer(loaded, "in").index_from_data);
}

// The stencil's spec as gi init drafts it runs in the emulator and its
// training checks pass (with a count one short, the last row's read past
// the end gives no number, and the check fails).
TEST(IndexArithmetic, AClampedStencilsDraftRunsInTheEmulator) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gi-clamp-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "diff.cu")
      << "__global__ void diff(const float* in, float* out, int nx, int ny) {\n"
         "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  const int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
         "  if (x >= nx || y >= ny) return;\n"
         "  int xp = x + 1;\n"
         "  if (xp >= nx) xp = nx - 1;\n"
         "  int xm = x - 1;\n"
         "  if (xm < 0) xm = 0;\n"
         "  out[y * nx + x] = in[y * nx + xp] - in[y * nx + xm];\n"
         "}\n";
  const test::CommandOutput init = test::run_gi("init \"" + (root / "diff.cu").string() + "\" --out \"" +
                                                (root / "user/diff").string() + "\" --size nx=1000 --size ny=300 --check");
  EXPECT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("inferred: count of 'in': nx * ny"), std::string::npos) << init.output;
  if (fitness::probe_cuda().gpus.empty()) {
    EXPECT_NE(init.output.find("\"status\": \"ok\""), std::string::npos) << init.output;
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace gi
