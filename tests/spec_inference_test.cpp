// gi init's inference (issue 29): element counts, roles, the grid and the
// work item read from a kernel (analysis/parameter_use.hpp), sizes as
// polynomials (analysis/symbolic_size.hpp), and the spec drafted from one
// problem size (gi/seed/spec_scaffold.hpp): on the plain user kernels of
// tests/data/user and the README's box filter it leaves no FILL, matches
// the hand-written counts and min_bytes, and its training check passes in
// the CPU emulator; where the kernel does not say, FILL stays with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "analysis/parameter_use.hpp"
#include "analysis/unset_components.hpp"
#include "analysis/symbolic_size.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/expression.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/coverage_checks.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/kernel_cut.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "gi/seed/texture_port.hpp"
#include "grammar/kernel_structure.hpp"
#include "parameter_use_support.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;
using analysis::SymbolicSize;
using json = nlohmann::json;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using test::count;
using test::pointer;
using test::use_of;

// A user's file `<tag>.cu` in a temporary folder of its own and `gi init`
// run on it (`arguments` after the file and --out), the seed in user/<tag>;
// the folder goes when the run does.
struct InitRun {
  fs::path root, file, dir;
  test::CommandOutput result;
  InitRun(const std::string& tag, const std::string& source, const std::string& arguments)
      : root(fs::temp_directory_path() / ("gi-init-" + tag + "-" + std::to_string(::getpid()))),
        file(root / (tag + ".cu")), dir(root / "user" / tag) {
    fs::remove_all(root);
    fs::create_directories(root);
    std::ofstream(file) << source;
    result = again(arguments);
  }
  ~InitRun() { fs::remove_all(root); }
  test::CommandOutput again(const std::string& arguments) const {
    return test::run_gi("init \"" + file.string() + "\" --out \"" + dir.string() + "\" " + arguments);
  }
  // Without a GPU, --check ran the training check on the emulator: it passed.
  void expect_emulated_check_passed() const {
    if (fitness::probe_cuda().gpus.empty()) {
      EXPECT_NE(result.output.find("\"status\": \"ok\""), std::string::npos) << result.output;
    }
  }
};

TEST(SymbolicSize, ArithmeticDivisionAndText) {
  const auto n = SymbolicSize::name("n"), nx = SymbolicSize::name("nx"), ny = SymbolicSize::name("ny");
  const auto one = SymbolicSize::constant(1);
  EXPECT_EQ((n * SymbolicSize::constant(4) + SymbolicSize::constant(8)).text(), "4 * n + 8");
  // (ny - 1) * nx + (nx - 1) + 1 = nx * ny: the count of a row-major 2D index.
  EXPECT_EQ(((ny - one) * nx + (nx - one) + one).text(), "nx * ny");
  const auto volume = nx * ny * SymbolicSize::name("nz");
  ASSERT_TRUE(volume.divided_by(nx * ny));
  EXPECT_EQ(volume.divided_by(nx * ny)->text(), "nz");
  EXPECT_FALSE((volume + one).divided_by(nx)) << "not exact";
  EXPECT_FALSE(volume.divided_by(nx + ny)) << "only by one term";
  EXPECT_TRUE((nx - one).non_negative_for_sizes());
  EXPECT_FALSE((nx - ny).non_negative_for_sizes());
  EXPECT_FALSE((nx - one).non_negative());
  EXPECT_EQ(*(volume + one).evaluate({{"nx", 2}, {"ny", 3}, {"nz", 4}}), 25);
  EXPECT_FALSE(volume.evaluate({{"nx", 2}}));
}

// The rounded-up quotient is a name of its own that names() and evaluate()
// see through: ceil_div(nz, spacing) is over nz and spacing.
TEST(SymbolicSize, ARoundedUpQuotientIsANameOverItsParts) {
  const auto nz = SymbolicSize::name("nz"), spacing = SymbolicSize::name("spacing"), gx = SymbolicSize::name("gx");
  const auto nodes = SymbolicSize::ceil_div(nz, spacing);
  EXPECT_EQ((nodes * gx).text(), "ceil_div(nz, spacing) * gx");
  EXPECT_EQ((nodes * gx).names(), (std::vector<std::string>{"gx", "nz", "spacing"}));
  EXPECT_EQ(*(nodes * gx).evaluate({{"nz", 11}, {"spacing", 5}, {"gx", 2}}), 6);  // ceil(11 / 5) = 3
  EXPECT_FALSE(nodes.evaluate({{"nz", 11}}));
  EXPECT_TRUE((nodes - SymbolicSize::constant(1)).non_negative_for_sizes());
}

// max(a, b) is the larger where one provably is, drops an operand of an
// inner max that the other covers, and is either operand when deciding
// whether a difference is never negative (it is one of them).
TEST(SymbolicSize, AMaximumIsOneOfItsOperands) {
  const auto n = SymbolicSize::name("n"), one = SymbolicSize::constant(1);
  EXPECT_EQ(SymbolicSize::max_of(n, n - one).text(), "n");
  const auto m = SymbolicSize::max_of(one, n - one);
  EXPECT_EQ(m.text(), "max(1, n - 1)");
  EXPECT_EQ(SymbolicSize::max_of(m, n).text(), "n");
  EXPECT_EQ(SymbolicSize::max_of(n - one, SymbolicSize::max_of(SymbolicSize::constant(2), n - one)).text(),
            "max(2, n - 1)");
  EXPECT_TRUE((n - m).non_negative_for_sizes());        // 1 <= n and n - 1 <= n
  EXPECT_FALSE((m - n).non_negative_for_sizes());       // 1 - n < 0 for n = 2
  EXPECT_TRUE((m - one).non_negative_for_sizes());      // as a size, at least 1
  EXPECT_FALSE((n - one - m).non_negative_for_sizes());  // n - 2 for the operand 1 at n = 1
}

// Coordinates divided by a spacing that need not divide the extent (a
// coarse grid): z / spacing reaches ceil_div(nz, spacing) - 1, so the grid's
// count is in rounded-up quotients, as the hand-written spec of
// tests/data/user/grid_scatter says it.
TEST(ParameterUse, ADivisionThatIsNotExactReachesTheRoundedUpQuotient) {
  const auto u = use_of(
      "__global__ void k(const float* image, int nx, int ny, int nz, int spacing, float* grid) {\n"
      "  const int index = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (index < nx * ny * nz) {\n"
      "    const int x = index % nx;\n"
      "    const int z = index / (nx * ny);\n"
      "    atomicAdd(&grid[(z / spacing) * 4 + x / 3], image[index]);\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "grid"), "ceil_div(nx, 3) + 4 * ceil_div(nz, spacing) - 4");
}

TEST(ParameterUse, AOneDimensionalGuardGivesCountsGridAndRoles) {
  const auto u = use_of(
      "__global__ void k(const float* a, float* b, float* c, float* total, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    c[i] = a[i] + b[i];\n"
      "    b[i] += 1.0f;\n"
      "    atomicAdd(total, a[i]);\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "a"), "n");
  EXPECT_EQ(count(u, "c"), "n");
  EXPECT_EQ(count(u, "total"), "1");
  EXPECT_TRUE(pointer(u, "a").read);
  EXPECT_FALSE(pointer(u, "a").written);
  EXPECT_TRUE(pointer(u, "c").written);
  EXPECT_FALSE(pointer(u, "c").read);
  EXPECT_TRUE(pointer(u, "b").read && pointer(u, "b").written) << "compound assignment: read and written";
  EXPECT_EQ(pointer(u, "total").atomic, "add");
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "n");
  EXPECT_EQ(u.work.variable[0], "i");
  EXPECT_NE(pointer(u, "a").count_evidence.find("line 4: a[i], i < n (line 3)"), std::string::npos)
      << pointer(u, "a").count_evidence;
}

TEST(ParameterUse, EarlyReturnsLoopsDivisionAndClampsBoundIndices) {
  // Early return with ||, a 2D index from blockIdx.y, a loop counter, a clamp.
  const auto box = use_of(
      "__global__ void k(const float* in, float* out, int width, int height, int radius) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  int y = blockIdx.y;\n"
      "  if (x >= width || y >= height) return;\n"
      "  float s = 0.0f;\n"
      "  for (int d = -radius; d <= radius; ++d) s += in[y * width + min(max(x + d, 0), width - 1)];\n"
      "  out[y * width + x] = s;\n"
      "}\n");
  EXPECT_EQ(count(box, "in"), "height * width");
  EXPECT_EQ(count(box, "out"), "height * width");
  ASSERT_TRUE(box.work.bound[1]);
  EXPECT_EQ(box.work.bound[1]->text(), "height");
  // Coordinates from one index by / and %, through locals.
  const auto slices = use_of(
      "__global__ void k(const float* v, int nx, int ny, int nz, float* sums) {\n"
      "  const int voxels = nx * ny * nz;\n"
      "  int index = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (index < voxels) {\n"
      "    int slice = index / (nx * ny);\n"
      "    int rest = index % (nx * ny);\n"
      "    atomicAdd(&sums[slice], v[slice * nx * ny + rest]);\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(slices, "sums"), "nz");
  EXPECT_EQ(count(slices, "v"), "nx * ny * nz");
  // A row per thread.
  const auto rows = use_of(
      "__global__ void k(const float* m, int rows, int cols, float* sums) {\n"
      "  const int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (row >= rows) { return; }\n"
      "  float s = 0.0f;\n"
      "  for (int c = 0; c < cols; c++) s += m[row * cols + c];\n"
      "  sums[row] = s;\n"
      "}\n");
  EXPECT_EQ(count(rows, "m"), "cols * rows");
  EXPECT_EQ(count(rows, "sums"), "rows");
  // A braceless loop whose body is a braced loop: the outer bound holds in
  // the inner block too (it was 'a grows from its start' before).
  const auto nest = use_of(
      "__global__ void k(const double* v, double* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  double s = 0;\n"
      "  for (int a = 0; a < 3; ++a)\n"
      "    for (int b = 0; b < 3; ++b) {\n"
      "      s += v[i * 9 + a * 3 + b];\n"
      "    }\n"
      "  out[i] = s;\n"
      "}\n");
  EXPECT_EQ(count(nest, "v"), "9 * n");
}

TEST(ParameterUse, AnAliasAndAGrowingWhileCounterAreFollowed) {
  // `const float* q = p + start;` then q[c] with a counter that only grows
  // under `while (c < cols)`: p's extent is start's plus c's.
  const auto u = use_of(
      "__global__ void k(const float* m, int rows, int cols, float* out) {\n"
      "  const int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (row < rows) {\n"
      "    const float* values = m + (long long)row * cols;\n"
      "    float best = values[0];\n"
      "    int c = 1;\n"
      "    while (c < cols) {\n"
      "      best = fmaxf(best, values[c]);\n"
      "      c += 1;\n"
      "    }\n"
      "    out[row] = best;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "m"), "cols * rows");
  EXPECT_TRUE(pointer(u, "m").read);
  EXPECT_FALSE(pointer(u, "m").written);
  // A counter that also shrinks is not followed.
  const auto down = use_of(
      "__global__ void k(const float* m, int n, float* out) {\n"
      "  int c = 0;\n"
      "  while (c < n) { out[0] += m[c]; c++; c -= 2; }\n"
      "}\n");
  EXPECT_FALSE(pointer(down, "m").count);
}

TEST(ParameterUse, AHelpersClampingReturnBoundsADataIndex) {
  // The bin comes from data, but the helper clamps it with ternaries: each
  // side is evaluated under what its test says, the helper's parameter is
  // the call's argument.
  const auto u = use_of(
      "__device__ int clamp_bin(int bin, int last) {\n"
      "  return bin < 0 ? 0 : (bin > last ? last : bin);\n"
      "}\n"
      "__global__ void k(const float* v, int n, int bins, unsigned* hist) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) atomicAdd(&hist[clamp_bin((int)(v[i] * bins), bins - 1)], 1u);\n"
      "}\n");
  EXPECT_EQ(count(u, "hist"), "bins");
  EXPECT_EQ(pointer(u, "hist").atomic, "add");
  // Without the lower clamp the bin may be negative: refused.
  const auto half = use_of(
      "__device__ int top(int bin) { return bin > 255 ? 255 : bin; }\n"
      "__global__ void k(const float* v, unsigned* hist) {\n"
      "  atomicAdd(&hist[top((int)v[threadIdx.x])], 1u);\n"
      "}\n");
  EXPECT_FALSE(pointer(half, "hist").count);
}

TEST(ParameterUse, WhatTheKernelDoesNotSayIsRefusedWithItsReason) {
  const auto u = use_of(
      "__device__ int bin_of(float v) { return (int)(v * 255.0f); }\n"
      "__global__ void k(const float* v, const int* idx, float* gathered, int* hist, float* q, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  atomicAdd(&hist[bin_of(v[i])], 1);\n"
      "  if (i < n) gathered[i] = v[idx[i]];\n"
      "  float* p;\n"
      "  p = q;\n"
      "  p[0] = 1.0f;\n"
      "}\n");
  EXPECT_TRUE(pointer(u, "hist").index_from_data);
  EXPECT_NE(pointer(u, "hist").refusal.find("computed from loaded data"), std::string::npos) << pointer(u, "hist").refusal;
  EXPECT_NE(pointer(u, "v").refusal.find("nothing bounds the index 'i'"), std::string::npos) << pointer(u, "v").refusal;
  EXPECT_TRUE(pointer(u, "idx").values_index) << "its values index v: no random integers for it";
  // A pointer assigned after its declaration (a declared copy, `float* p = q;`, is followed).
  EXPECT_NE(pointer(u, "q").refusal.find("used as a pointer"), std::string::npos) << pointer(u, "q").refusal;
  EXPECT_EQ(pointer(u, "hist").atomic, "add");
}

// Kernels written to launch more blocks than one grid row holds number
// their blocks row by row; on the spec's grid of one row that is the global
// index itself.
TEST(ParameterUse, AGlobalIndexOverAFlattenedTwoDimensionalGridIsTheIndexOnOneRow) {
  const std::string source =
      "__global__ void k(const float* in, float* out, const unsigned n) {\n"
      "  const unsigned tid = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) out[tid] = 2.0f * in[tid];\n"
      "}\n";
  const auto u = use_of(source);
  EXPECT_EQ(count(u, "in"), "n");
  EXPECT_EQ(count(u, "out"), "n");
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "n");
  EXPECT_EQ(u.work.flattened_rows_line, 2);
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000000"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  EXPECT_EQ(s.spec["launch"]["grid"], nlohmann::ordered_json::parse(R"j(["ceil_div(n, B)", 1, 1])j"));
  // blockIdx.y numbering rows of items as well: which rows, gi cannot tell.
  const std::string rows =
      "__global__ void k(float* out, int n, int rows) {\n"
      "  int tid = (blockIdx.x + blockIdx.y * gridDim.x) * blockDim.x + threadIdx.x;\n"
      "  int row = blockIdx.y;\n"
      "  if (tid < n && row < rows) out[row * n + tid] = 1.0f;\n"
      "}\n";
  const SpecScaffold clash = scaffold_spec(rows, "k.cu", std::nullopt, "user",
                                           parse_init_sizes({"n=1000", "rows=10"}, {}));
  ASSERT_TRUE(clash.spec["launch"]["grid"][0].is_string());
  EXPECT_NE(clash.spec["launch"]["grid"][0].get<std::string>().find("FILL"), std::string::npos);
  EXPECT_NE(clash.spec["launch"]["grid"][0].get<std::string>().find("rows apart"), std::string::npos);
}

// A grid-stride loop, as a for or a while: the loop's condition bounds the
// index, and the guard on the global index gives the grid (one pass each).
TEST(ParameterUse, AGridStrideLoopIsBoundedByItsCondition) {
  const auto for_loop = use_of(
      "__global__ void k(const float* a, float* b, int n) {\n"
      "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) b[i] = a[i];\n"
      "}\n");
  EXPECT_EQ(count(for_loop, "a"), "n");
  ASSERT_TRUE(for_loop.work.bound[0]);
  EXPECT_EQ(for_loop.work.bound[0]->text(), "n");
  const auto while_loop = use_of(
      "__global__ void k(const float* a, float* b, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  while (i < n) {\n"
      "    b[i] = 3.0f * a[i];\n"
      "    i += blockDim.x * gridDim.x;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(while_loop, "b"), "n");
  ASSERT_TRUE(while_loop.work.bound[0]);
  EXPECT_EQ(while_loop.work.bound[0]->text(), "n");
  // A step by a size (an integer scalar, at least 1 as every size) grows
  // too (Analyser::steps_grow); one that may be negative is no growth gi
  // can see.
  const auto by_size = use_of(
      "__global__ void k(float* b, int n, int s) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  while (i < n) { b[i] = 1.0f; i += s; }\n"
      "}\n");
  EXPECT_EQ(count(by_size, "b"), "n");
  const auto other = use_of(
      "__global__ void k(float* b, int n, int s) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  while (i < n) { b[i] = 1.0f; i += s - n; }\n"
      "}\n");
  EXPECT_FALSE(pointer(other, "b").count) << count(other, "b");
}

// A function-like macro in an index is its expansion; one defined in a
// local header counts as the file's own once the caller has read it.
TEST(ParameterUse, AFunctionLikeMacroIsItsExpansionAndHeadersGiveMacros) {
  const std::string kernel =
      "#include \"layout.h\"\n"
      "__global__ void k(float* out, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) out[IDX2C(tid, COLUMN, n)] = 1.0f;\n"
      "}\n";
  const grammar::ParsedKernel k = grammar::parse_kernel(kernel, "k.cu");
  analysis::IncludedHeaders headers;
  headers.lines = analysis::directive_lines(
      "#pragma once\n#define IDX2C(i, j, ld) \\\n  (((j) * (ld)) + (i))\n#define COLUMN 2\n", "layout.h");
  headers.complete = true;
  const auto u = analysis::analyse_parameter_use(k, k.functions[0], headers);
  EXPECT_EQ(count(u, "out"), "3 * n");
  EXPECT_NE(pointer(u, "out").count_evidence.find("COLUMN = 2 (layout.h line 4)"), std::string::npos)
      << pointer(u, "out").count_evidence;
  // Without the header: nothing says what IDX2C is.
  EXPECT_EQ(count(use_of(kernel), "out").rfind("none: ", 0), 0u);
  // A macro that pastes tokens is refused by name.
  const auto pasted = use_of(
      "#define AT(p, i) p##_base + (i)\n"
      "__global__ void k(float* out, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) out[AT(x, tid)] = 1.0f;\n"
      "}\n");
  EXPECT_NE(count(pasted, "out").find("'AT' (the macro at line 1) pastes or quotes tokens"), std::string::npos)
      << count(pasted, "out");
}

TEST(ParameterUse, AWholeNumberMacroInAnIndexIsItsValue) {
  const auto u = use_of(
      "#define TILE 16\n"
      "#define HALO (2)  // each side\n"
      "__global__ void k(const float* in, float* out, int tiles) {\n"
      "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (t >= tiles) return;\n"
      "  for (int j = 0; j < TILE; ++j) out[t * TILE + j] = in[t * TILE + j + HALO];\n"
      "}\n");
  EXPECT_EQ(count(u, "out"), "16 * tiles");
  EXPECT_EQ(count(u, "in"), "16 * tiles + 2");
  EXPECT_NE(pointer(u, "in").count_evidence.find("TILE = 16 (line 1)"), std::string::npos)
      << pointer(u, "in").count_evidence;
  EXPECT_NE(pointer(u, "in").count_evidence.find("HALO = 2 (line 2)"), std::string::npos)
      << pointer(u, "in").count_evidence;
  // Chosen by a conditional: the branch a build without -D options takes;
  // with a local header gi has not read, WIDE may be defined there: refused.
  const std::string tiles =
      "#ifdef WIDE\n"
      "#define TILE 32\n"
      "#else\n"
      "#define TILE 16\n"
      "#endif\n"
      "__global__ void k(float* out, int tiles) {\n"
      "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (t < tiles) out[t * TILE] = 1.0f;\n"
      "}\n";
  const auto chosen = use_of(tiles);
  EXPECT_EQ(count(chosen, "out"), "16 * tiles - 15");
  EXPECT_NE(pointer(chosen, "out").count_evidence.find("TILE = 16 (line 4, in a build without -D options)"),
            std::string::npos)
      << pointer(chosen, "out").count_evidence;
  const auto undecided = use_of("#include \"config.h\"\n" + tiles);
  EXPECT_NE(count(undecided, "out").find("'TILE' is defined under a condition gi cannot decide (line 3)"),
            std::string::npos)
      << count(undecided, "out");
  // A later #define is not the kernel's.
  const auto later = use_of(
      "#define TILE 16\n"
      "__global__ void k(float* out, int tiles) {\n"
      "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (t < tiles) out[t * TILE] = 1.0f;\n"
      "}\n"
      "#undef TILE\n"
      "#define TILE 64\n");
  EXPECT_EQ(count(later, "out"), "16 * tiles - 15");
  // Defined by a constant expression of numbers and such macros: its value.
  const auto constant = use_of(
      "#define WARP 32\n"
      "#define NVAR (WARP * 2 + (1 << 2) - 10 / 3)  // 65\n"
      "__global__ void k(float* out, int tiles) {\n"
      "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (t >= tiles) return;\n"
      "  for (int j = 0; j < NVAR; ++j) out[t * NVAR + j] = 1.0f;\n"
      "}\n");
  EXPECT_EQ(count(constant, "out"), "65 * tiles");
  // Defined by an expression over a name gi does not know: refused by name.
  const auto expression = use_of(
      "#define TILE (WARP * 2)\n"
      "__global__ void k(float* out, int tiles) {\n"
      "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (t < tiles) out[t * TILE] = 1.0f;\n"
      "}\n");
  EXPECT_NE(count(expression, "out").find("'TILE' is the macro '#define TILE (WARP * 2)' (line 1), which gi does not evaluate"),
            std::string::npos)
      << count(expression, "out");
  // A local defined over a name gi cannot see: the refusal says which.
  const auto unseen = use_of(
      "__global__ void k(float* v, int n) {\n"
      "  int i = blockIdx.x * THREADS + threadIdx.x;\n"
      "  if (i < n) v[i] = 0.0f;\n"
      "}\n");
  EXPECT_NE(count(unseen, "v").find("nothing bounds 'THREADS'"), std::string::npos) << count(unseen, "v");
}

// A bound the host sets through cudaMemcpyToSymbol: an int __constant__ is
// a size like a scalar parameter (the spec's "constants" set it); one that
// cannot be a size (a float, an array) is refused by name as a bound. An
// array is still set, its elements drawn like an input's.
TEST(ParameterUse, AnIntConstantIsASizeAndAnArrayConstantIsRefusedByName) {
  const std::string source =
      "__device__ __constant__ int c_Count;\n"
      "__constant__ int c_Dim[3];\n"
      "__global__ void k(float* v, float* w) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < c_Count) v[i] *= 2.0f;\n"
      "  if (i < c_Dim[0]) w[i] = 0.0f;\n"
      "}\n";
  const auto u = use_of(source);
  EXPECT_EQ(count(u, "v"), "c_Count");
  EXPECT_NE(count(u, "w").find("the guard 'i < c_Dim[0]' (line 6) names no size gi can use"), std::string::npos) << count(u, "w");
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "c_Count");
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"c_Count=5000"}, {}));
  EXPECT_EQ(s.spec["launch"]["grid"][0], "ceil_div(c_Count, B)");
  ASSERT_EQ(s.spec["constants"].size(), 2u) << s.spec["constants"];
  EXPECT_EQ(s.spec["constants"][0]["name"], "c_Count");
  EXPECT_EQ(s.spec["constants"][0]["type"], "int");
  EXPECT_EQ(s.spec["constants"][0]["value"], "c_Count");
  EXPECT_EQ(s.spec["constants"][1].dump(), R"({"name":"c_Dim","type":"int","count":3})");
  EXPECT_EQ(s.spec["workloads"]["train"]["variables"]["c_Count"], 5000);
  EXPECT_THROW(scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"c_Dim=5"}, {})),
               std::runtime_error)
      << "an array constant takes no --size";
}

// A kernel sized by __constant__ scalars alone (NiftyReg's tools kernels):
// gi init drafts a spec with no FILL, which loads, and whose plans set the
// constants from the workload's variables.
TEST(SpecInference, ConstantScalarsGiveASpecWithNoFillThatSetsThem) {
  const std::string source =
      "__device__ __constant__ int c_VoxelNumber;\n"
      "__device__ __constant__ float c_Weight;\n"
      "__device__ __constant__ float c_Unused;\n"
      "__global__ void scale(float* array_d) {\n"
      "  const int tid = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;\n"
      "  if (tid < c_VoxelNumber) array_d[tid] *= c_Weight;\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"c_VoxelNumber=4000000", "c_Weight=0.5"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  ASSERT_EQ(spec["constants"].size(), 2u) << "c_Unused is never read: " << spec["constants"];
  EXPECT_EQ(spec["parameters"][0]["count"], "c_VoxelNumber");
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", source, "k.cu", {.registry = false});
  ASSERT_EQ(k.constants.size(), 2u);
  const fitness::Workload w = fitness::generate_workload(k, k.train, 1);
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, w, 256);
  ASSERT_EQ(plan.constants.size(), 2u);
  int voxels = 0;
  float weight = 0;
  std::memcpy(&voxels, plan.constants[0].bytes.data(), 4);
  std::memcpy(&weight, plan.constants[1].bytes.data(), 4);
  EXPECT_EQ(voxels, 4000000);
  EXPECT_EQ(weight, 0.5f);
  EXPECT_EQ(plan.grid[0], 15625u);
}

// A texture fetch is a load: an index from it is an index from data.
TEST(ParameterUse, AnIndexFromATextureFetchIsFromLoadedData) {
  const auto u = use_of(
      "texture<int, 1, cudaReadModeElementType> slots;\n"
      "__global__ void k(float* v, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) v[tex1Dfetch(slots, i)] = 1.0f;\n"
      "}\n");
  EXPECT_TRUE(pointer(u, "v").index_from_data) << count(u, "v");
  EXPECT_NE(count(u, "v").find("computed from loaded data"), std::string::npos) << count(u, "v");
}

// `int bx = blockIdx.x;` and the like, assigned nowhere else, are the
// built-ins they name: `blockDim.x * bx + tx` is the global index.
TEST(ParameterUse, LocalsThatNameBuiltInsSpellTheGlobalIndex) {
  const auto u = use_of(
      "__global__ void k(float* v, int n) {\n"
      "  int bx = blockIdx.x;\n"
      "  int tx = threadIdx.x;\n"
      "  const int block = bx + gridDim.x * blockIdx.y;\n"
      "  int i = blockDim.x * block + tx;\n"
      "  if (i < n) v[i] = 1.0f;\n"
      "}\n");
  EXPECT_EQ(count(u, "v"), "n");
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.flattened_rows_line, 5);
  // A local that changes is not the built-in it starts as.
  const auto moved = use_of(
      "__global__ void k(float* v, int n) {\n"
      "  int bx = blockIdx.x;\n"
      "  bx = bx * 2;\n"
      "  int i = blockDim.x * bx + threadIdx.x;\n"
      "  if (i < n) v[i] = 1.0f;\n"
      "}\n");
  EXPECT_FALSE(moved.work.bound[0]);
}

// A pointer handed to a __device__ helper: the helper's accesses through its
// parameter, with the call's arguments for the helper's integer parameters,
// also where the pointer was first advanced by `p += e;` (once, in no loop).
TEST(ParameterUse, APointerPassedToAHelperIsSizedByTheHelpersAccesses) {
  const std::string source =
      "__device__ void prefix(float* out, const float* in, int len) {\n"
      "  out[0] = in[0];\n"
      "  for (int x = 1; x < len; x++) out[x] = in[x] + out[x - 1];\n"
      "}\n"
      "template <class T> __device__ T norm3(const T* p) { return p[0] * p[0] + p[1] * p[1] + p[2] * p[2]; }\n"
      "__device__ void bump(int* s, int at) { s[at] += 1; }\n"
      "__global__ void k(float* sums, float* w, float* points, float* lengths, int* seeds, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i == 0) { prefix(sums, w, n); bump(seeds, i); }\n"
      "  if (i < n) {\n"
      "    points += 3 * i;\n"
      "    lengths[i] = norm3<float>(points);\n"
      "  }\n"
      "}\n";
  const auto u = use_of(source);
  EXPECT_EQ(count(u, "sums"), "n");
  EXPECT_TRUE(pointer(u, "sums").read && pointer(u, "sums").written) << "out[x - 1] is read";
  EXPECT_EQ(count(u, "w"), "n");
  EXPECT_FALSE(pointer(u, "w").written);
  EXPECT_EQ(count(u, "seeds"), "1") << "i == 0 at the call";
  EXPECT_EQ(count(u, "points"), "3 * n");
  EXPECT_NE(pointer(u, "points").count_evidence.find("'points' advanced by 3 * i"), std::string::npos)
      << pointer(u, "points").count_evidence;
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "n") << "`i == 0` is one thread, never the work item";
  // Advanced inside a loop, or twice: where it points depends on the trip.
  const auto looped = use_of(
      "__global__ void k(float* p, int n, int m) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  for (int j = 0; j < m; ++j) { p += 2; p[0] = 1.0f; }\n"
      "}\n");
  EXPECT_FALSE(pointer(looped, "p").count) << count(looped, "p");
  EXPECT_NE(count(looped, "p").find("used as a pointer"), std::string::npos) << count(looped, "p");
}

// A pointer the kernel never names touches no element: one is enough to
// pass, and it moves no bytes. One a macro names is refused.
TEST(ParameterUse, APointerTheKernelNeverNamesNeedsOneElement) {
  const auto u = use_of(
      "__global__ void k(float* v, const float* spare, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) v[i] = 0.0f;\n"
      "}\n");
  EXPECT_EQ(count(u, "spare"), "1");
  EXPECT_TRUE(pointer(u, "spare").unused);
  const SpecScaffold s = scaffold_spec(
      "__global__ void k(float* v, const float* spare, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) v[i] = 0.0f;\n"
      "}\n",
      "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000"}, {}));
  EXPECT_EQ(s.spec["min_bytes"], "4 * n") << "the unused buffer moves nothing";
  const auto in_macro = use_of(
      "#define AT(j) spare[j]\n"
      "__global__ void k(float* v, const float* spare, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) v[i] = AT(i);\n"
      "}\n");
  EXPECT_FALSE(pointer(in_macro, "spare").count);
  EXPECT_NE(count(in_macro, "spare").find("a macro does"), std::string::npos) << count(in_macro, "spare");
}

// Written for a launch of exactly as many threads as elements: no guard
// anywhere on the axis, so the host launches exactly the work's threads.
// The spec's variable threads_x (threads_y, threads_z) is that count, and a
// buffer indexed by the thread's number holds as many elements.
TEST(ParameterUse, AnAxisNoGuardBoundsIsAnExactLaunchOfItsThreadCount) {
  const auto u = use_of(
      "__global__ void k(float* v, const float* w, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
      "  v[i] = 2.0f * v[i] + w[y * n + i];\n"
      "}\n");
  EXPECT_EQ(count(u, "v"), "threads_x");
  EXPECT_EQ(count(u, "w"), "n * threads_y - n + threads_x");
  ASSERT_TRUE(u.work.bound[0] && u.work.bound[1]);
  EXPECT_TRUE(u.work.exact[0]);
  EXPECT_TRUE(u.work.exact[1]);
  EXPECT_FALSE(u.work.exact[2]);
  EXPECT_EQ(u.work.bound[0]->text(), "threads_x");
  EXPECT_NE(u.work.evidence[0].find("line 2: the global index x, which indexes buffers, and no guard bounds it anywhere"),
            std::string::npos)
      << u.work.evidence[0];
  // A guard somewhere on the axis: a read outside it is no exact launch's.
  const auto guarded = use_of(
      "__global__ void k(float* v, const float* w, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  float a = w[i];\n"
      "  if (i < n) v[i] = a;\n"
      "}\n");
  EXPECT_EQ(count(guarded, "v"), "n");
  EXPECT_NE(count(guarded, "w").find("written for a launch of exactly as many threads as elements"), std::string::npos)
      << count(guarded, "w");
  EXPECT_FALSE(guarded.work.exact[0]);
}

// A clamp to the left edge (`max(x - 1, 0)` under x < n) reaches n - 2 or
// 0, neither provably the larger: its count is their max, which the
// clamp to the right edge beside it covers.
TEST(ParameterUse, AMaximumOfEndsNeitherProvablyLargerIsAMaxOfCounts) {
  const std::string left =
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (x >= n) return;\n"
      "  out[x] = in[max(x - 1, 0)];\n"
      "}\n";
  EXPECT_EQ(count(use_of(left), "in"), "max(n - 1, 1)");
  std::string both = left;
  both.replace(both.find("in[max(x - 1, 0)]"), std::string("in[max(x - 1, 0)]").size(),
               "in[max(x - 1, 0)] + in[min(x + 1, n - 1)]");
  EXPECT_EQ(count(use_of(both), "in"), "n");
  // Neither operand at least 0: no count.
  std::string below = left;
  below.replace(below.find("max(x - 1, 0)"), std::string("max(x - 1, 0)").size(), "max(x - 1, x - 2)");
  EXPECT_NE(count(use_of(below), "in").find("none"), std::string::npos) << count(use_of(below), "in");
}

// Each declarator of one declaration is a definition (`int y = blockIdx.y,
// z = blockIdx.z;`): z is the grid's slice, bounded by its guard, not an
// exact launch's thread count. A for's init keeps only its first.
TEST(ParameterUse, EachDeclaratorOfADeclarationIsADefinition) {
  const auto u = use_of(
      "__global__ void k(float* v, int nx, int ny, int nz) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;\n"
      "  float half = 0.5f, scale = 2.0f * half;\n"
      "  if (x < nx && y < ny && z < nz) v[x + nx * (y + ny * z)] = scale;\n"
      "}\n");
  EXPECT_EQ(count(u, "v"), "nx * ny * nz");
  EXPECT_FALSE(u.work.exact[1]);
  EXPECT_FALSE(u.work.exact[2]);
}

// A guard written as a ternary (`s[t] = i < n ? in[i] : 0.f;`) bounds the
// read in its branch and is a guard on the axis: no exact launch.
TEST(ParameterUse, ATernaryGuardBoundsItsBranchAndIsNoExactLaunch) {
  const auto u = use_of(
      "__global__ void block_sum(const float* in, float* partial, int n) {\n"
      "  extern __shared__ float s[];\n"
      "  unsigned t = threadIdx.x;\n"
      "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  s[t] = i < n ? in[i] : 0.f;\n"
      "  float v = i < n ? in[i] : 0.f;\n"
      "  if (t == 0) partial[blockIdx.x] = s[0] + v;\n"
      "}\n");
  EXPECT_EQ(count(u, "in"), "n");
  EXPECT_FALSE(u.work.exact[0]);
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "n");
}

// One element per block (a two-pass reduction's partial sums,
// `partial[blockIdx.x]`): the block size sets the buffer's length and what
// each element holds, so the draft fixes it and counts ceil_div(n, 256).
TEST(SpecScaffold, APerBlockOutputFixesTheBlockSize) {
  const std::string source =
      "__global__ void block_sum(const float* in, float* partial, int n) {\n"
      "  extern __shared__ float s[];\n"
      "  unsigned t = threadIdx.x;\n"
      "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  s[t] = i < n ? in[i] : 0.f;\n"
      "  __syncthreads();\n"
      "  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {\n"
      "    if (t < stride) s[t] += s[t + stride];\n"
      "    __syncthreads();\n"
      "  }\n"
      "  if (t == 0) partial[blockIdx.x] = s[0];\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000000"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  EXPECT_EQ(s.spec["parameters"][1]["count"], "ceil_div(n, 256)");
  EXPECT_EQ(s.spec["tunables"]["block_sizes"].dump(), "[256]");
  EXPECT_EQ(s.spec["tunables"]["default_block_size"], 256);
  const fitness::KernelSpec k =
      fitness::parse_kernel_spec(json::parse(s.spec.dump()), "spec.json", source, "k.cu", {.registry = false});
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 256);
  EXPECT_EQ(plan.buffers[1].count, 3907u);
  EXPECT_EQ(plan.grid[0], 3907u) << "one element per block of the grid";
}

// Dynamic shared memory (`extern __shared__ float s[];`): its bytes over the
// block size B from the indices into it, threadIdx.x being below B; without
// them a GPU launch reads and writes past zero bytes.
TEST(SpecScaffold, DynamicSharedMemoryGetsItsBytesOverTheBlockSize) {
  const std::string source =
      "__global__ void shift(const float* in, float* out, int n) {\n"
      "  extern __shared__ float s[];\n"
      "  unsigned t = threadIdx.x;\n"
      "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  s[t] = i < n ? in[i] : 0.f;\n"
      "  __syncthreads();\n"
      "  if (i < n) out[i] = s[(t + 1) % blockDim.x];\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=100000"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  EXPECT_EQ(s.spec["launch"]["shared_bytes"], "4 * B");
  // Indices gi cannot bound leave the bytes to the user, with the reason.
  const std::string unbounded =
      "__global__ void gather(const float* in, float* out, const int* at, int n) {\n"
      "  extern __shared__ float s[];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) { s[at[i]] = in[i]; out[i] = s[threadIdx.x]; }\n"
      "}\n";
  const SpecScaffold u = scaffold_spec(unbounded, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000"}, {}));
  EXPECT_NE(u.spec["launch"]["shared_bytes"].get<std::string>().find("FILL: bytes of the dynamic shared memory 's'"),
            std::string::npos)
      << u.spec["launch"];
  // The drafted bytes run in the emulator; without them the kernel touches
  // memory its launch never gave it, and the emulator faults as a GPU does.
  const InitRun run("shift", source, "--size n=5000 --check");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.output;
  run.expect_emulated_check_passed();
  json spec = json::parse(read(run.dir / "spec.json"));
  spec["launch"].erase("shared_bytes");
  std::ofstream(run.dir / "spec.json") << spec.dump(1);
  const test::CommandOutput without = test::run_gi("emulate \"" + run.dir.string() + "\"");
  EXPECT_NE(without.exit_code, 0);
  EXPECT_NE(without.output.find("illegal memory access"), std::string::npos) << without.output;
}

// A loop's counter read where no bound of its loop holds (after the loop)
// has no range; the init is its largest value only where the loop counts down.
TEST(ParameterUse, ALoopCounterOutsideItsBoundHasNoRangeUnlessItCountsDown) {
  const auto after = use_of(
      "__global__ void k(float* out, const float* in, int n) {\n"
      "  int i;\n"
      "  for (i = 0; i < n; i++) out[i] = in[i];\n"
      "  out[i] = 0.f;\n"
      "}\n");
  EXPECT_EQ(count(after, "in"), "n");
  EXPECT_FALSE(pointer(after, "out").count) << count(after, "out");
  const auto down = use_of(
      "__global__ void k(float* out, int n) {\n"
      "  for (int s = n; s > 0; s >>= 1) out[s] = 1.f;\n"
      "}\n");
  EXPECT_EQ(count(down, "out"), "n + 1");
}

// A read right of `&&` in a condition runs only where the left side holds:
// `if (x < n && mask[x] >= 0)` reads mask below n (NiftyReg's affine kernel).
TEST(ParameterUse, AReadRightOfAndInAConditionIsGuardedByItsLeftSide) {
  const auto u = use_of(
      "__global__ void k(float* v, const int* mask, const int* skip, int n) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (x < n && mask[x] >= 0) v[x] = 1.f;\n"
      "  if (x >= n || skip[x] != 0) return;\n"
      "  v[x] += 2.f;\n"
      "}\n");
  EXPECT_EQ(count(u, "mask"), "n");
  EXPECT_EQ(count(u, "skip"), "n");
  EXPECT_EQ(count(u, "v"), "n");
}

// Two extents over a scalar offset: where an access runs, its guard on
// the global index let a thread through, so the guard's bound is at least 1,
// and that orders them. Where no guard says so, the user decides.
TEST(ParameterUse, ARunningAccessProvesItsGuardsBoundIsAtLeastOne) {
  const auto u = use_of(
      "__global__ void k(float* a, int n, int s) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (x >= n - s - 1) return;\n"
      "  a[n * (x + s + 1) + s] -= a[n * s + s];\n"
      "}\n");
  EXPECT_EQ(count(u, "a"), (SymbolicSize::name("n") * SymbolicSize::name("n") - SymbolicSize::name("n") +
                            SymbolicSize::name("s") + SymbolicSize::constant(1))
                               .text());
  EXPECT_NE(pointer(u, "a").count_evidence.find("where that access runs"), std::string::npos)
      << pointer(u, "a").count_evidence;
  const auto unordered = use_of(
      "__global__ void k(float* a, int n, int s) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (x < n) a[x] += a[s];\n"
      "}\n");
  // Neither need is the larger for every size: the buffer holds both.
  EXPECT_EQ(count(unordered, "a"), "max(n, s + 1)");
}

TEST(ParameterUse, ACompareAndSwapHelperIsTheAtomicItImplements) {
  const auto u = use_of(read(fs::path(GI_TEST_DATA) / "user/vector_max/kernel.cu"));
  EXPECT_EQ(pointer(u, "result").atomic, "max");
  EXPECT_EQ(count(u, "result"), "1");
  EXPECT_EQ(count(u, "values"), "n");
}

// An array __constant__ (a filter's taps): its length from the declaration,
// macros of the default build being their values; its elements drawn like an
// input's on every workload (--like sets them), and copied to the symbol
// before each launch, in the emulator too, which checks the size as the GPU
// runner does. An unbuilt row launch (blockIdx.y alone, no guard) is exact on
// y, and --size threads_y=h names its rows.
TEST(SpecScaffold, AnArrayConstantIsDrawnLikeAnInputAndSetBeforeTheLaunch) {
  const std::string source =
      "#define RADIUS 4\n"
      "#define TAPS (2 * RADIUS + 1)\n"
      "__constant__ float c_taps[TAPS];\n"
      "__global__ void conv_rows(float* out, const float* in, int w, int h) {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  int y = blockIdx.y;\n"
      "  if (x < w) {\n"
      "    float s = 0.f;\n"
      "    for (int k = -RADIUS; k <= RADIUS; ++k) s += c_taps[k + RADIUS] * in[y * w + min(max(x + k, 0), w - 1)];\n"
      "    out[y * w + x] = s;\n"
      "  }\n"
      "}\n";
  const InitRun run("taps", source, "--size w=1000 --size h=40 --size threads_y=h --like 'c_taps:uniform(0,1)' --check");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.output;
  EXPECT_NE(run.result.output.find("(0 fields to fill)"), std::string::npos) << run.result.output;
  EXPECT_NE(run.result.output.find("constant 'c_taps': 9 float (line 3: [TAPS])"), std::string::npos)
      << run.result.output;
  run.expect_emulated_check_passed();
  const json spec = json::parse(read(run.dir / "spec.json"));
  EXPECT_EQ(spec["constants"], json::parse(R"([{"name": "c_taps", "type": "float", "count": 9}])"));
  EXPECT_EQ(spec["launch"]["grid"], json::parse(R"j(["ceil_div(w, B)", "h", 1])j"));
  EXPECT_EQ(spec["workloads"]["train"]["variables"]["inputs"]["c_taps"], json::parse(R"({"uniform": [0, 1]})"));
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", source, "taps.cu", {.registry = false});
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 128);
  ASSERT_EQ(plan.constants.size(), 1u);
  ASSERT_EQ(plan.constants[0].bytes.size(), 36u);
  float taps[9];
  std::memcpy(taps, plan.constants[0].bytes.data(), 36);
  for (float t : taps) EXPECT_TRUE(t >= 0.f && t <= 1.f) << t;
  EXPECT_NE(taps[0], taps[1]) << "drawn, not one value";

  // A count and a value, or neither; a scalar spec'd as an array, and back.
  const auto error = [&](json j) {
    try {
      fitness::parse_kernel_spec(j, "spec.json", source, "taps.cu", {.registry = false});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  json both = spec;
  both["constants"][0]["value"] = 1;
  EXPECT_NE(error(both).find("constants[0]: give a scalar constant its \"value\", an array constant its \"count\""),
            std::string::npos)
      << error(both);
  json scalar = spec;
  scalar["constants"][0].erase("count");
  scalar["constants"][0]["value"] = 1;
  EXPECT_NE(error(scalar).find("'c_taps' is a __constant__ array (taps.cu line 3): give it a \"count\""),
            std::string::npos)
      << error(scalar);
  // The wrong length: the emulator refuses the launch, naming both sizes.
  json wrong = spec;
  wrong["constants"][0]["count"] = 8;
  std::ofstream(run.dir / "spec.json") << wrong.dump(1);
  const test::CommandOutput emulated = test::run_gi("emulate \"" + run.dir.string() + "\"");
  EXPECT_NE(emulated.output.find("the __constant__ variable 'c_taps' is 36 bytes, the plan gives 32"),
            std::string::npos)
      << emulated.output;
}

// A __constant__ array's declared length holds what its indices reach: sizes
// that read past it are refused, naming the array and the element.
TEST(SpecScaffold, SizesThatReadPastAConstantArrayAreRefused) {
  const std::string source =
      "#define STREL 5\n"
      "__constant__ float c_strel[STREL * STREL];\n"
      "__global__ void dilate(float* out, const float* in, int n, int sm, int sn) {\n"
      "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (t < n) {\n"
      "    float m = 0.f;\n"
      "    for (int i = 0; i < sm; ++i)\n"
      "      for (int j = 0; j < sn; ++j)\n"
      "        if (c_strel[i * sn + j] != 0.f) m = fmaxf(m, in[t]);\n"
      "    out[t] = m;\n"
      "  }\n"
      "}\n";
  const SpecScaffold fits =
      scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=100000", "sm=5", "sn=5"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(fits.spec.dump())).empty()) << fits.spec.dump(2);
  for (const auto& w : fits.spec["workloads"]["validate"]) EXPECT_LE(w["variables"]["sm"].get<double>() *
                                                                         w["variables"]["sn"].get<double>(), 25);
  try {
    scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=100000", "sm=5", "sn=6"}, {}));
    ADD_FAILURE() << "sizes past c_strel were taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("read the __constant__ array 'c_strel' up to element 29, past its 25 elements"),
              std::string::npos)
        << e.what();
  }
}

// An unsigned input's values start at 0: the generator refuses a negative
// one, and the draft's own check would fail on it.
TEST(SpecScaffold, AnUnsignedInputIsDrawnFromZeroUp) {
  const std::string source =
      "__global__ void twice(unsigned* out, const unsigned* in, const uint2* pairs, const int* signs, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = in[i] * 2u + pairs[i].y + (unsigned)signs[i];\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=100000"}, {}));
  const auto& inputs = s.spec["workloads"]["train"]["variables"]["inputs"];
  EXPECT_EQ(inputs["in"].dump(), R"({"uniform":[0,100]})");
  EXPECT_EQ(inputs["pairs"].dump(), R"({"uniform":[0,100]})");
  EXPECT_EQ(inputs["signs"].dump(), R"({"uniform":[-100,100]})");
  const fitness::KernelSpec k =
      fitness::parse_kernel_spec(json::parse(s.spec.dump()), "spec.json", source, "k.cu", {.registry = false});
  EXPECT_NO_THROW(fitness::generate_workload(k, k.train, 1));
}

// An exact launch's thread count on x stays a multiple of every block size
// on every drafted workload; the other sizes vary as before.
TEST(InitWorkloads, ASizeWithAMultipleStaysAMultipleOnEveryWorkload) {
  const SizeSet given = {{"threads_x", 262144}, {"n", 5000}};
  const SizeMultiples multiples = {{"threads_x", 1024}};
  const SizeSet small = small_check_sizes(given, {"n", "threads_x"}, {}, multiples);
  EXPECT_EQ(small.at("threads_x"), 1024);
  EXPECT_EQ(small.at("n"), 37);
  const auto values = [](const SizeSet& s) { return s.at("threads_x") + s.at("n"); };
  const auto held = held_out_sizes(given, {"n", "threads_x"}, values, 16e6, {}, multiples);
  std::set<double> counts;
  for (const auto& s : held) {
    EXPECT_EQ(std::fmod(s.at("threads_x"), 1024), 0) << s.at("threads_x");
    EXPECT_GE(s.at("threads_x"), 1024);
    counts.insert(s.at("threads_x"));
  }
  EXPECT_GT(counts.size(), 3u) << "the count still varies";
}

// A kernel with no guard drafts an exact launch: threads_x a multiple of
// 1024 everywhere, and a given count that is not is an error that says why.
TEST(SpecScaffold, AKernelWithNoGuardDraftsAnExactLaunch) {
  const std::string source =
      "__global__ void k(float* v, const float* w, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  v[i] = w[i + n];\n"
      "}\n";
  const SpecScaffold s =
      scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=3", "threads_x=1048576"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  EXPECT_EQ(s.spec["launch"]["grid"], nlohmann::ordered_json::parse(R"j(["ceil_div(threads_x, B)", 1, 1])j"));
  EXPECT_EQ(s.spec["parameters"][1]["count"], "n + threads_x");
  std::vector<nlohmann::ordered_json> workloads = {s.spec["workloads"]["train"], s.spec["workloads"]["train_checks"][0]};
  for (const auto& w : s.spec["workloads"]["validate"]) workloads.push_back(w);
  for (const auto& w : workloads)
    EXPECT_EQ(std::fmod(w["variables"]["threads_x"].get<double>(), 1024), 0) << w.dump();
  EXPECT_EQ(s.spec["workloads"]["train_checks"][0]["variables"]["threads_x"], 1024);
  try {
    scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=3", "threads_x=1000"}, {}));
    ADD_FAILURE() << "a count no block size divides was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("give a multiple of 1024"), std::string::npos) << e.what();
  }
  // The host launches one thread per element of n: the count is n itself,
  // kept a multiple of 1024, and no threads_x is left.
  const SpecScaffold named =
      scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=4096", "threads_x=n"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(named.spec.dump())).empty()) << named.spec.dump(2);
  EXPECT_EQ(named.spec["launch"]["grid"][0], "ceil_div(n, B)");
  EXPECT_EQ(named.spec["parameters"][1]["count"], "2 * n");
  EXPECT_FALSE(named.spec["workloads"]["train"]["variables"].contains("threads_x"));
  for (const auto& w : named.spec["workloads"]["validate"])
    EXPECT_EQ(std::fmod(w["variables"]["n"].get<double>(), 1024), 0) << w.dump();
  EXPECT_THROW(scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=4000", "threads_x=n"}, {})),
               std::runtime_error);
  EXPECT_THROW(scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=4096", "threads_y=n"}, {})),
               std::runtime_error);
  EXPECT_THROW(scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=size"}, {})),
               std::runtime_error)
      << "a size tied to one the kernel lacks";
  // One thread per pixel of an image (Rodinia's dilate_kernel): threads_x
  // the product of two sizes, each drafted a multiple of 32 so that the
  // product stays a multiple of 1024; a given product that is not is refused.
  const std::string image =
      "__global__ void k(float* v, int m, int w) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  v[(i % m) * w + i / m] = 1.f;\n"
      "}\n";
  const SpecScaffold pixels =
      scaffold_spec(image, "k.cu", std::nullopt, "user", parse_init_sizes({"m=1024", "w=512", "threads_x=m*w"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(pixels.spec.dump())).empty()) << pixels.spec.dump(2);
  std::vector<nlohmann::ordered_json> drafted = {pixels.spec["workloads"]["train_checks"][0]};
  for (const auto& w : pixels.spec["workloads"]["validate"]) drafted.push_back(w);
  for (const auto& w : drafted) {
    EXPECT_EQ(std::fmod(w["variables"]["m"].get<double>(), 32), 0) << w.dump();
    EXPECT_EQ(std::fmod(w["variables"]["w"].get<double>(), 32), 0) << w.dump();
  }
  try {
    scaffold_spec(image, "k.cu", std::nullopt, "user", parse_init_sizes({"m=1000", "w=3", "threads_x=m*w"}, {}));
    ADD_FAILURE() << "a product no block size divides was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("give sizes whose product is a multiple of 1024"), std::string::npos) << e.what();
  }
  // Without the count: the note says what it is.
  const SpecScaffold unsized = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=3"}, {}));
  bool noted = false;
  for (const std::string& n : unsized.notes)
    noted = noted || n.find("--size threads_x=VALUE (the threads your host launches on x, a multiple of 1024)") !=
                         std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(InitWorkloads, SmallChecksAreOddAndHeldOutOnesVaryShapeAndReachTheValues) {
  const SizeSet given = {{"rows", 4096}, {"cols", 1024}, {"scale", 0.5}};
  const SizeSet small = small_check_sizes(given, {"cols", "rows"});
  EXPECT_EQ(small.at("cols"), 37);
  EXPECT_EQ(small.at("rows"), 29);
  EXPECT_EQ(small.at("scale"), 0.5) << "not a size: kept";
  EXPECT_EQ(small_check_sizes({{"n", 4e6}}, {"n"}).at("n"), 1003);
  // The grid's bound with its block fixed at 512: a full block beside the
  // partial last; 1003 already spans two blocks.
  EXPECT_EQ(small_check_sizes(given, {"cols", "rows"}, {}, {}, {{"rows", 512}}).at("rows"), 541);
  EXPECT_EQ(small_check_sizes({{"n", 4e6}}, {"n"}, {}, {}, {{"n", 512}}).at("n"), 1003);
  const auto values = [](const SizeSet& s) { return s.at("rows") * s.at("cols"); };
  const auto held = held_out_sizes(given, {"cols", "rows"}, values, 16e6);
  ASSERT_EQ(held.size(), 5u);
  double total = 0;
  std::set<double> aspects;
  for (const auto& s : held) {
    total += values(s);
    aspects.insert(s.at("rows") / s.at("cols"));
    EXPECT_EQ(s.at("scale"), 0.5);
  }
  EXPECT_GE(total, 16e6);
  EXPECT_EQ(aspects.size(), 5u) << "each workload another shape";
  EXPECT_EQ(std::fmod(held[0].at("rows"), 2.0), 1.0) << "the first is odd";
}

// Validation needs 16 M output values or 16 M input values, not 16 M of
// both together: a copy kernel's held-out workloads must hold 16 M outputs
// (they held 8 M when inputs and outputs were summed, and invert_mapping's
// evolution was rejected for it).
TEST(InitWorkloads, HeldOutWorkloadsHoldTheOutputsValidationCounts) {
  const std::string source = R"(extern "C" __global__ void copy2(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
})";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000000"}, {}));
  double outputs = 0;
  for (const auto& w : s.spec.at("workloads").at("validate")) outputs += w.at("variables").at("n").get<double>();
  EXPECT_GE(outputs, 16e6);
  EXPECT_LT(outputs, 20e6) << "grown no further than needed";
}

// The plain user kernels and the README's box filter: the sizes of their
// hand-written specs' timed workloads are all gi init is told.
struct Inferred {
  std::string kernel;  // folder under tests/data/user, or "box_filter"
  std::vector<std::string> sizes;
};

fs::path kernel_file(const std::string& name) {
  if (name == "box_filter") return fs::path(GI_SOURCE_DIR) / "examples/box_filter/box_filter_rows.cu";
  return fs::path(GI_TEST_DATA) / "user" / name / "kernel.cu";
}

fs::path hand_spec(const std::string& name) {
  if (name == "box_filter") return fs::path(GI_SOURCE_DIR) / "examples/box_filter/filled_spec.json";
  return fs::path(GI_TEST_DATA) / "user" / name / "spec.json";
}

// A kernel whose work needs one size below another (Gaussian elimination's
// step t below the matrix size, `i < Size - t - 1`): gi init refuses given
// sizes that leave no work, and its drafted workloads keep the relation (a
// drafted set that breaks it keeps the given value of the offending size).
// Its output is stored from row t + 1 on only, so no store reaches element 0:
// inout, so that the check sees the rows it never writes unchanged.
TEST(SpecInference, SizesKeepEveryExtentPositiveAndPartialStoresAreInout) {
  const std::string source =
      "__global__ void k(float* m, const float* a, int Size, int t) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < Size - t - 1) m[Size * (i + t + 1) + t] = a[Size * (i + t + 1) + t] / a[Size * t + t];\n"
      "}\n";
  EXPECT_THROW(scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"Size=2048", "t=2048"}, {})),
               std::runtime_error);
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"Size=2048", "t=5"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  EXPECT_EQ(s.spec["parameters"][0]["role"], "inout") << s.spec.dump(2);
  for (const auto& w : s.spec["workloads"]["validate"]) {
    const double size = w["variables"]["Size"].get<double>(), t = w["variables"]["t"].get<double>();
    EXPECT_GE(size - t - 1, 1) << w.dump();
  }
  const auto& small = s.spec["workloads"]["train_checks"][0]["variables"];
  EXPECT_GE(small["Size"].get<double>() - small["t"].get<double>() - 1, 1) << small.dump();
  // The same with the size names the other way round: the drafted set that
  // breaks the relation gets the given values back.
  const auto usable = [](const SizeSet& z) { return z.at("a") - z.at("b") - 1 >= 1; };
  const SizeSet small_ab = small_check_sizes({{"a", 5}, {"b", 2}}, {"a", "b"}, usable);
  EXPECT_TRUE(usable(small_ab)) << small_ab.at("a") << " " << small_ab.at("b");
  // A plain store from index 0 stays out.
  const SpecScaffold plain = scaffold_spec(read(kernel_file("row_sum")), "row_sum.cu", std::nullopt, "user",
                                           parse_init_sizes({"rows=4096", "cols=1024"}, {}));
  for (const auto& p : plain.spec["parameters"])
    if (p["name"] == "sums") {
      EXPECT_EQ(p["role"], "out");
    }
}

TEST(SpecInference, PlainKernelsGetASpecWithNoFillThatMatchesTheHandWrittenOne) {
  const std::vector<Inferred> kernels = {
      {"count_positive", {"n=4194304", "threshold=0.25"}},  {"dot_product", {"n=4194304"}},
      {"masked_mean", {"n=4194304"}},     {"row_sum", {"rows=4096", "cols=1024"}},
      {"row_max", {"rows=4096", "cols=1024"}},       {"histogram256", {"n=4194304"}},
      {"slice_sums", {"nx=128", "ny=128", "nz=128"}}, {"vector_max", {"n=4194304"}},
      {"weighted_sum", {"n=4194304"}},    {"box_filter", {"width=4096", "height=1024", "radius=3"}},
      {"joint_histogram64", {"pixels=4194304"}},
      // The coarse grid's extents are parameters of their own: the user ties them.
      {"grid_scatter", {"nx=160", "ny=160", "nz=160", "spacing=5", "gx=ceil_div(nx,spacing)", "gy=ceil_div(ny,spacing)"}},
      {"scale_rows", {"rows=2048", "cols=2048"}},   {"transfer_curve", {"count=16777216", "lo=-1", "hi=1"}},
      {"planes_to_deformation", {"nx=256", "ny=256", "nz=160"}},
      {"deformation_to_planes", {"nx=256", "ny=256", "nz=160"}}};
  for (const Inferred& k : kernels) {
    SCOPED_TRACE(k.kernel);
    const SpecScaffold s = scaffold_spec(read(kernel_file(k.kernel)), kernel_file(k.kernel).string(), std::nullopt,
                                         "user", parse_init_sizes(k.sizes, {}));
    const json spec = json::parse(s.spec.dump());
    EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
    // Counts and min_bytes as the hand-written spec has them, on its sizes
    // and on the sizes of a held-out workload.
    const json hand = json::parse(read(hand_spec(k.kernel)));
    const auto value_of = [](const std::string& expression, const json& variables) {
      fitness::Variables v;
      for (const auto& [name, value] : variables.items())
        if (value.is_number()) v[name] = value.get<double>();
      // The hand-written spec of weighted_sum sizes its grid by a variable of its own.
      if (!v.count("blocks")) v["blocks"] = 1;
      return fitness::evaluate_expression(expression, v);
    };
    for (const json& variables : {hand["workloads"]["train"]["variables"], spec["workloads"]["validate"][2]["variables"]}) {
      for (std::size_t p = 0; p < hand["parameters"].size(); ++p) {
        if (!hand["parameters"][p].contains("count")) continue;
        const json& c = hand["parameters"][p]["count"];
        EXPECT_EQ(value_of(spec["parameters"][p]["count"].is_string() ? spec["parameters"][p]["count"].get<std::string>()
                                                                      : spec["parameters"][p]["count"].dump(),
                           variables),
                  value_of(c.is_string() ? c.get<std::string>() : c.dump(), variables))
            << hand["parameters"][p]["name"];
        EXPECT_EQ(spec["parameters"][p]["role"], hand["parameters"][p]["role"]) << hand["parameters"][p]["name"];
      }
      const double mine = value_of(spec["min_bytes"].get<std::string>(), variables);
      const double theirs = value_of(hand["min_bytes"].get<std::string>(), variables);
      EXPECT_NEAR(mine, theirs, 0.1 * theirs) << "min_bytes " << spec["min_bytes"] << " vs " << hand["min_bytes"];
    }
  }
}

// A float sum in a loop that warp_per_item may share among lanes drafts the
// tolerance of a reordered sum, as row_sum's hand-written spec has it; a
// kernel with no such loop (transfer_curve) keeps 1e-5.
TEST(SpecInference, ALoopSumTheLanesMayShareDraftsAReorderedSumsTolerance) {
  const SpecScaffold rows = scaffold_spec(read(kernel_file("row_sum")), "row_sum.cu", std::nullopt, "user",
                                          parse_init_sizes({"rows=4096", "cols=1024"}, {}));
  const json hand = json::parse(read(hand_spec("row_sum")));
  EXPECT_EQ(rows.spec["tolerance"]["abs"].get<double>(), hand["tolerance"]["abs"].get<double>());
  EXPECT_EQ(rows.spec["tolerance"]["rel"].get<double>(), hand["tolerance"]["rel"].get<double>());
  EXPECT_NE(rows.spec["tolerance_note"].get<std::string>().find("line 8: the loop sums float sum"), std::string::npos)
      << rows.spec["tolerance_note"];
  const SpecScaffold curve = scaffold_spec(read(kernel_file("transfer_curve")), "transfer_curve.cu", std::nullopt,
                                           "user", parse_init_sizes({"count=16777216", "lo=-1", "hi=1"}, {}));
  EXPECT_EQ(curve.spec["tolerance"]["abs"].get<double>(), 1e-5);
  EXPECT_EQ(curve.spec["tolerance"]["rel"].get<double>(), 1e-5);
}

// The box filter's `y >= height` is never true with exactly `height` rows of
// blocks: gi init exempts that direction as the hand-written spec does.
TEST(SpecInference, AGuardTheGridMakesUnreachableIsExemptFromCoverage) {
  const SpecScaffold s = scaffold_spec(read(kernel_file("box_filter")), "box_filter_rows.cu", std::nullopt, "user",
                                       parse_init_sizes({"width=4096", "height=1024", "radius=3"}, {}));
  const json hand = json::parse(read(hand_spec("box_filter")));
  ASSERT_TRUE(s.spec.contains("coverage_exempt"));
  ASSERT_EQ(s.spec["coverage_exempt"].size(), 1u);
  EXPECT_EQ(s.spec["coverage_exempt"][0]["branch"], hand["coverage_exempt"][0]["branch"]);
  EXPECT_EQ(s.spec["coverage_exempt"][0]["direction"], hand["coverage_exempt"][0]["direction"]);
  // A guard on x (grid ceil_div(width, B)) is reachable: never exempt.
  const SpecScaffold one = scaffold_spec(read(kernel_file("dot_product")), "dot_product.cu", std::nullopt, "user",
                                         parse_init_sizes({"n=4194304"}, {}));
  EXPECT_FALSE(one.spec.contains("coverage_exempt"));
}

// The drafted spec runs: gi init --check (without a GPU: the training check
// on the CPU emulator, with branch coverage).
TEST(SpecInference, AnInferredSpecLoadsAndItsTrainingCheckPassesInTheEmulator) {
  const fs::path dir = fs::temp_directory_path() / ("gi-init-" + std::to_string(::getpid())) / "user/slice_sums";
  fs::remove_all(dir.parent_path().parent_path());
  const test::CommandOutput init = test::run_gi("init \"" + kernel_file("slice_sums").string() + "\" --out \"" +
                                                dir.string() + "\" --size nx=128 --size ny=128 --size nz=128 --check");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("inferred: count of 'sums': nz (line 13: sums[slice]"), std::string::npos) << init.output;
  if (fitness::probe_cuda().gpus.empty()) {
    EXPECT_NE(init.output.find("\"status\": \"ok\""), std::string::npos) << init.output;
    EXPECT_NE(init.output.find("coverage passed"), std::string::npos) << init.output;
  }
  fs::remove_all(dir.parent_path().parent_path());
}

// On a GPU, --check runs gi check on every workload (one child process,
// `--workload all`) and gi coverage, sharing one compile and reference cache
// (the seed is compiled once), which is gone afterwards.
TEST(SpecInferenceGpu, InitCheckStepsShareOneCacheAndLeaveNoneBehind) {
  if (fitness::probe_cuda().gpus.empty()) GTEST_SKIP() << "needs a GPU";
  const fs::path dir = fs::temp_directory_path() / ("gi-init-gpu-" + std::to_string(::getpid())) / "user/slice_sums";
  fs::remove_all(dir.parent_path().parent_path());
  const test::CommandOutput init = test::run_gi("init \"" + kernel_file("slice_sums").string() + "\" --out \"" +
                                                dir.string() + "\" --size nx=128 --size ny=128 --size nz=128 --check");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  const auto occurrences = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(occurrences(init.output, "\"status\": \"ok\""), 7) << init.output;
  EXPECT_NE(init.output.find("coverage passed"), std::string::npos) << init.output;
  const std::size_t at = init.output.find(" --cache '");
  ASSERT_NE(at, std::string::npos) << init.output;
  const std::string cache = init.output.substr(at + 10, init.output.find('\'', at + 10) - at - 10);
  EXPECT_EQ(occurrences(init.output, " --cache '" + cache + "'"), 2) << "the checks and coverage, one cache";
  EXPECT_EQ(occurrences(init.output, "$ gi check "), 1) << "every workload in one process";
  EXPECT_NE(init.output.find(" --workload all"), std::string::npos) << init.output;
  EXPECT_FALSE(fs::exists(cache)) << cache;
  fs::remove_all(dir.parent_path().parent_path());
}

// The corpus forms gi init now reads (a flattened 2-D grid's index, a
// pointer advanced by `p += e;` and handed to a helper) draft a spec that
// loads and passes its training check.
TEST(SpecInference, ASpecThroughAFlattenedGridAndAHelperRunsInTheEmulator) {
  const InitRun run("lengths",
                    "__device__ float length3(const float* p) { return sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]); }\n"
                    "__global__ void lengths(const float* points, float* out, const unsigned n) {\n"
                    "  const unsigned tid = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;\n"
                    "  if (tid < n) {\n"
                    "    points += 3 * tid;\n"
                    "    out[tid] = length3(points);\n"
                    "  }\n"
                    "}\n",
                    "--size n=100000 --check");
  const test::CommandOutput& init = run.result;
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("inferred: count of 'points': 3 * n"), std::string::npos) << init.output;
  run.expect_emulated_check_passed();
}

// A texture object (cudaTextureObject_t) is a buffer of what its
// tex1Dfetch<T> reads, sized like a pointer (also through a helper); a
// bool is a scalar given as true or false. The draft has no FILL and its
// training check passes (the emulator's fetch is a load of the buffer).
TEST(SpecInference, ATextureObjectIsABufferOfWhatTex1DfetchReads) {
  const auto u = use_of(
      "__device__ float first(cudaTextureObject_t t, int i) { return tex1Dfetch<float4>(t, 2 * i + 1).x; }\n"
      "__global__ void k(cudaTextureObject_t a, cudaTextureObject_t b, cudaTextureObject_t c, float* out, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = tex1Dfetch<float>(a, i) + first(b, i) + tex1Dfetch<int>(c, i) + tex1Dfetch<float>(c, i);\n"
      "}\n");
  EXPECT_EQ(pointer(u, "a").texture_type, "float");
  EXPECT_EQ(count(u, "a"), "n");
  EXPECT_TRUE(pointer(u, "a").read);
  EXPECT_FALSE(pointer(u, "a").written);
  EXPECT_EQ(pointer(u, "b").texture_type, "float4");
  EXPECT_EQ(count(u, "b"), "2 * n");
  EXPECT_EQ(pointer(u, "c").texture_type, "?");

  const InitRun run("gather",
                    "__global__ void gather(cudaTextureObject_t points, float* out, const unsigned n, bool squared) {\n"
                    "  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (tid < n) {\n"
                    "    const float4 p = tex1Dfetch<float4>(points, tid);\n"
                    "    out[tid] = squared ? p.x * p.x + p.y * p.y : p.x + p.y;\n"
                    "  }\n"
                    "}\n",
                    "--size n=100000 --size squared=true --check");
  const test::CommandOutput& init = run.result;
  const fs::path& dir = run.dir;
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("inferred: texture 'points': a buffer of float4 (the kernel reads it with "
                             "tex1Dfetch<float4>, from line 4)"), std::string::npos) << init.output;
  const json spec = json::parse(read(dir / "spec.json"));
  EXPECT_EQ(spec["parameters"][0]["texture"], true);
  EXPECT_EQ(spec["parameters"][0]["count"], "n");
  EXPECT_EQ(spec["parameters"][3]["type"], "bool");
  EXPECT_EQ(spec["workloads"]["train"]["variables"]["squared"], 1);
  // The other side of `squared ? ... : ...` on the small check and on every other held-out workload.
  EXPECT_EQ(spec["workloads"]["train_checks"][0]["variables"]["squared"], 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(spec["workloads"]["validate"][i]["variables"]["squared"], i % 2 == 1 ? 0 : 1);
  EXPECT_EQ(spec["min_bytes"], "20 * n");
  run.expect_emulated_check_passed();
  // A bool takes true or false.
  const test::CommandOutput two_bool = run.again("--force --size n=100000 --size squared=2");
  EXPECT_NE(two_bool.exit_code, 0);
  EXPECT_NE(two_bool.output.find("--size squared=2: 'squared' is a bool: give true or false"), std::string::npos)
      << two_bool.output;
  // A texture read as two types: its buffer's type is left to the user.
  const SpecScaffold two = scaffold_spec(
      "__global__ void k(cudaTextureObject_t t, float* o, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) o[i] = tex1Dfetch<float>(t, i) + tex1Dfetch<int>(t, i);\n"
      "}\n", "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000"}, {}));
  const std::vector<std::string> fills = fitness::fields_to_fill(json::parse(two.spec.dump()));
  ASSERT_EQ(fills.size(), 1u);
  EXPECT_NE(fills[0].find("parameters[0].type: FILL: the element type that tex1Dfetch<T> reads from texture 't'"),
            std::string::npos) << fills[0];
}

// __umul24(a, b) is a * b to the analysis: the global index and sizes read
// through it (analysis/expression.hpp).
TEST(ParameterUse, Mul24IsAProduct) {
  const auto u = use_of(
      "__global__ void k(float* out, int width, int height) {\n"
      "  const int x = __umul24(blockIdx.x, blockDim.x) + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < width && y < height) out[__umul24(y, width) + x] = 1.0f;\n"
      "}\n");
  EXPECT_EQ(count(u, "out"), "height * width");
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "width");
}

// An integer vector by value or in a __constant__ is one size per
// component (`dim.x` is dim_x); `--size dim=64,32,16` gives them all, and a
// float vector's components are plain values. The draft has no FILL, its
// plan passes each vector's bytes, and its training check passes.
TEST(SpecInference, VectorScalarsAreOneSizePerComponent) {
  const std::string source =
      "__device__ __constant__ uint3 c_Dim;\n"
      "__device__ __constant__ float4 c_Row;\n"
      "__global__ void fill(float* out, int3 dim, float2 w) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < dim.x && y < dim.y) out[y * dim.x + x] = w.x * x + w.y * y + c_Row.x;\n"
      "  if (x < c_Dim.x && y < c_Dim.y && blockIdx.z == 0) out[dim.x * dim.y + y * c_Dim.x + x] = c_Row.w;\n"
      "}\n";
  const auto u = use_of(source);
  EXPECT_EQ(count(u, "out"), "c_Dim_x * c_Dim_y + dim_x * dim_y") << count(u, "out");
  // The draft checked below: the constant read, not bounding.
  const std::string checked =
      "__device__ __constant__ uint3 c_Dim;\n"
      "__device__ __constant__ float4 c_Row;\n"
      "__global__ void fill(float* out, int3 dim, float2 w) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < dim.x && y < dim.y) out[y * dim.x + x] = w.x * x + w.y * y + c_Row.x * c_Dim.z + c_Row.w;\n"
      "}\n";

  const InitRun run("fill", checked, "--size dim=200,30,1 --size w=0.5,2 --size c_Dim=100,20,1 --size c_Row=1,2,3,4 --check");
  const test::CommandOutput& init = run.result;
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  const json spec = json::parse(read(run.dir / "spec.json"));
  EXPECT_EQ(spec["parameters"][1]["type"], "int3");
  EXPECT_EQ(spec["parameters"][1]["value"], json::parse(R"(["dim_x", "dim_y", "dim_z"])"));
  EXPECT_EQ(spec["parameters"][2]["value"], json::parse(R"(["w_x", "w_y"])"));
  EXPECT_EQ(spec["workloads"]["train"]["variables"]["dim_y"], 30);
  EXPECT_EQ(spec["workloads"]["train"]["variables"]["c_Row_w"], 4);
  run.expect_emulated_check_passed();
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", checked, "fill.cu", {.registry = false});
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 128);
  ASSERT_EQ(plan.scalars.size(), 2u);
  ASSERT_EQ(plan.scalars[0].bytes.size(), 12u);
  int dim[3];
  std::memcpy(dim, plan.scalars[0].bytes.data(), 12);
  EXPECT_EQ(dim[0], 200);
  EXPECT_EQ(dim[1], 30);
  EXPECT_EQ(dim[2], 1);
  ASSERT_EQ(plan.scalars[1].bytes.size(), 8u);
  float w[2];
  std::memcpy(w, plan.scalars[1].bytes.data(), 8);
  EXPECT_EQ(w[1], 2.0f);
  ASSERT_EQ(plan.constants.size(), 2u);
  EXPECT_EQ(plan.constants[0].bytes.size(), 12u);
  EXPECT_EQ(plan.constants[1].bytes.size(), 16u);

  // One number for a vector says which form it takes.
  const test::CommandOutput one = run.again("--force --size dim=200");
  EXPECT_NE(one.exit_code, 0);
  EXPECT_NE(one.output.find("--size dim: 'dim' is an int3: give each component, --size dim=X,Y,Z"), std::string::npos)
      << one.output;
}

// A loop counter under a limit that differs per thread (`i < last`, last =
// tid * bins + bins) reaches the limit's largest value; one whose limit gi
// cannot read at all is refused, not taken to be its start (that once gave
// a count one loop short).
TEST(ParameterUse, AGrowingCounterReachesItsPerThreadLimitsLargestValue) {
  const auto u = use_of(
      "__global__ void m(const float* h, float* out, int n, int bins) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    unsigned first = tid * bins;\n"
      "    unsigned last = first + bins;\n"
      "    float sum = h[first];\n"
      "    for (unsigned i = first + 1; i < last; ++i) sum += h[i];\n"
      "    out[tid] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "h"), "bins * n");
  EXPECT_EQ(count(u, "out"), "n");
  const auto loaded = use_of(
      "__global__ void m(const float* h, const int* ends, float* out, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    float sum = 0.0f;\n"
      "    for (int i = tid; i < ends[tid]; ++i) sum += h[i];\n"
      "    out[tid] = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_NE(count(loaded, "h").find("the guard 'i < ends[tid]' (line 5) names no size gi can use"), std::string::npos)
      << count(loaded, "h");
}

// A record written field by field through a stepped index (NiftyReg's
// Jacobian and second-derivative kernels): `out[k++]` after `k = tid * 4`
// reaches tid * 4 + 3, so the buffer holds 4 * n; `index *= 2` scales.
TEST(ParameterUse, AnIndexSteppedInStraightLineCodeReachesItsLastValue) {
  const auto u = use_of(
      "__global__ void jac(float* out, const float4* in, int n) {\n"
      "  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    unsigned index = tid;\n"
      "    index *= 2;\n"
      "    float4 a = in[index++];\n"
      "    float4 b = in[index];\n"
      "    int k = tid * 4;\n"
      "    out[k++] = a.x;\n"
      "    out[k++] = a.y;\n"
      "    out[k++] = b.x;\n"
      "    out[k] = b.y;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "out"), "4 * n");
  EXPECT_EQ(count(u, "in"), "2 * n");
  // A step in a loop once per pass follows the loop's counter.
  const auto looped = use_of(
      "__global__ void jac(float* out, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int k = tid * 4;\n"
      "    for (int j = 0; j < 4; ++j) out[k++] = 0.f;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(looped, "out"), "4 * n");
  // A step under a condition leaves the count to the user, with the reason.
  const auto branched = use_of(
      "__global__ void jac(float* out, const float* in, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    int k = tid * 4;\n"
      "    for (int j = 0; j < 4; ++j) {\n"
      "      out[k] = 0.f;\n"
      "      if (in[j] > 0.f) k++;\n"
      "    }\n"
      "  }\n"
      "}\n");
  EXPECT_NE(count(branched, "out").find("line 7 under a condition or inner loop"), std::string::npos)
      << count(branched, "out");
}

// A counter stepped once per pass of a loop whose own counter starts at a
// value the counter's definition also holds (NiftyReg's approximate Jacobian
// gradient: `jacIndex = (z * gy + y) * gx + x - 1` stepped beside `pixelX =
// x - 1`): x cancels, and pixelX's guards bound the index exactly. A step by
// a size (`offset += dim`) multiplies it by the passes.
TEST(ParameterUse, ACounterSteppedInLockstepWithItsLoopIsBoundedThroughTheLoopsCounter) {
  const auto u = use_of(
      "__global__ void grad(float4* gradient, const float* det, const float* rows, int nx, int ny, int dim) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < nx * ny) {\n"
      "    const int y = tid / nx;\n"
      "    const int x = tid - y * nx;\n"
      "    float sum = 0.f;\n"
      "    for (int py = y - 1; py < y + 2; ++py) {\n"
      "      if (py > 0 && py < ny - 1) {\n"
      "        int jacIndex = py * nx + x - 1;\n"
      "        for (int px = (int)(x - 1); px < (int)(x + 2); ++px) {\n"
      "          if (px > 0 && px < nx - 1) sum += det[jacIndex];\n"
      "          jacIndex++;\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "    int offset = 0;\n"
      "    for (int i = 0; i < 4; i++) {\n"
      "      sum += rows[offset + tid];\n"
      "      offset += dim;\n"
      "    }\n"
      "    gradient[tid].x = sum;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "det"), "nx * ny - nx - 1");
  EXPECT_EQ(count(u, "rows"), "nx * ny + 3 * dim");
}

// A store to a member of an element (`g[tid].x += ...`, NiftyReg's
// gradient kernels) writes the buffer; the element's other members keep
// their values, so it is read and written (inout), as an update is.
TEST(ParameterUse, AStoreToAnElementsMemberWritesTheBuffer) {
  const auto u = use_of(
      "__global__ void k(float4* gradient, float2* pair, const float4* in, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    gradient[tid].x += 0.5f * in[tid].x;\n"
      "    pair[tid].y = in[tid].w;\n"
      "  }\n"
      "}\n");
  EXPECT_TRUE(pointer(u, "gradient").read);
  EXPECT_TRUE(pointer(u, "gradient").written);
  EXPECT_TRUE(pointer(u, "pair").read);
  EXPECT_TRUE(pointer(u, "pair").written);
  EXPECT_TRUE(pointer(u, "in").read);
  EXPECT_FALSE(pointer(u, "in").written);
  EXPECT_EQ(count(u, "gradient"), "n");
}

// A vector local declared without a value, set member by member and stored
// whole: the members it never sets are undefined in the output, so the
// draft checks only the others (NiftyReg's realGradient.w).
TEST(SpecInference, ComponentsAKernelNeverSetsAreLeftOutOfTheCheck) {
  const std::string kernel =
      "__global__ void convert(float4* gradient, float4* copy, const float4* in, int n) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < n) {\n"
      "    float4 real;\n"
      "    real.x = 2.f * in[tid].x;\n"
      "    real.y = in[tid].y; /* .z and .w never set */\n"
      "    gradient[tid] = real;\n"
      "    float4 whole;\n"
      "    whole = in[tid];\n"
      "    whole.x = 1.f;\n"
      "    copy[tid] = whole;\n"
      "  }\n"
      "}\n";
  const grammar::ParsedKernel k = grammar::parse_kernel(kernel, "k.cu");
  const auto unset = analysis::unset_components(k, k.functions[0]);
  ASSERT_EQ(unset.size(), 1u);
  ASSERT_TRUE(unset.count("gradient"));
  EXPECT_EQ(unset.at("gradient").set, (std::vector<int>{0, 1}));
  EXPECT_NE(unset.at("gradient").evidence.find("line 4: 'real' is a float4 declared without a value; the kernel "
                                               "sets .x .y and line 7 stores it whole into 'gradient'"),
            std::string::npos)
      << unset.at("gradient").evidence;
  const SpecScaffold s = scaffold_spec(kernel, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000"}, {}));
  EXPECT_EQ(s.spec["parameters"][0]["checked_components"], nlohmann::ordered_json::array({0, 1}));
  EXPECT_FALSE(s.spec["parameters"][1].contains("checked_components"));
}

// The candidate small checks `gi init --check` tries when coverage misses
// directions: the drafted small check with every default float input of one
// sign, or zero; an input the user described keeps its distribution.
TEST(SpecInference, CoverageCandidatesGiveTheDefaultFloatInputsOneSign) {
  const std::string kernel =
      "__global__ void fold(const float* det, const float* weight, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = det[i] <= 0.f ? weight[i] : 0.f;\n"
      "}\n";
  const SpecScaffold s =
      scaffold_spec(kernel, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000"}, {"weight:uniform(2,3)"}));
  const auto candidates = one_sign_checks(s.spec);
  ASSERT_EQ(candidates.size(), 3u);
  const auto& inputs = candidates[0].check["variables"]["inputs"];
  EXPECT_EQ(inputs["det"], nlohmann::ordered_json({{"uniform", {0.5, 1.5}}}));
  EXPECT_EQ(inputs["weight"], nlohmann::ordered_json({{"uniform", {2, 3}}}));
  EXPECT_EQ(candidates[1].check["variables"]["inputs"]["det"], nlohmann::ordered_json({{"uniform", {-1.5, -0.5}}}));
  EXPECT_EQ(candidates[2].check["variables"]["inputs"]["det"], nlohmann::ordered_json({{"constant", 0}}));
  // The sizes are the drafted small check's.
  EXPECT_EQ(candidates[0].check["variables"]["n"], s.spec["workloads"]["train_checks"][0]["variables"]["n"]);
  // Each candidate makes a spec that loads.
  nlohmann::ordered_json trial = s.spec;
  trial["workloads"]["train_checks"].push_back(candidates[0].check);
  EXPECT_NO_THROW(fitness::parse_kernel_spec(nlohmann::json::parse(trial.dump()), "spec.json", kernel, "k.cu"))
      << trial.dump(2);
}

// Texture references (removed in CUDA 12) that the kernel reads with
// tex1Dfetch become texture-object parameters; gi init then drafts them as
// texture buffers, and the port compiles and runs. References it cannot
// port are left, with the reason.
TEST(SpecInference, TextureReferencesArePortedToTextureObjects) {
  const std::string source =
      "texture<float4, 1, cudaReadModeElementType> pointTexture;\n"
      "static texture<float> weightTexture;\n"
      "texture<float, 3, cudaReadModeElementType> volumeTexture;\n"
      "__global__ void weigh(float* out, const int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) {\n"
      "    const float4 p = tex1Dfetch(pointTexture, i);\n"
      "    out[i] = (p.x + p.y) * tex1Dfetch(weightTexture, i);\n"
      "  }\n"
      "}\n"
      "__global__ void sample(float* out) { out[threadIdx.x] = tex3D(volumeTexture, 0.5f, 0.5f, 0.5f); }\n";
  const TexturePort port = port_texture_references(source, "k.cu", "weigh");
  EXPECT_TRUE(port.refusal.empty()) << port.refusal;
  ASSERT_EQ(port.ported.size(), 2u);
  EXPECT_EQ(port.ported[0], "'pointTexture' (texture<float4, 1>, line 1)");
  EXPECT_NE(port.source.find("__global__ void weigh(float* out, const int n, cudaTextureObject_t pointTexture, "
                             "cudaTextureObject_t weightTexture) {"), std::string::npos) << port.source;
  EXPECT_NE(port.source.find("tex1Dfetch<float4>(pointTexture, i)"), std::string::npos) << port.source;
  EXPECT_NE(port.source.find("tex1Dfetch<float>(weightTexture, i)"), std::string::npos) << port.source;
  EXPECT_EQ(port.source.find("texture<float4"), std::string::npos) << "the declaration is blanked";
  EXPECT_NE(port.source.find("texture<float, 3"), std::string::npos) << "another kernel's reference stays";
  EXPECT_EQ(std::count(port.source.begin(), port.source.end(), '\n'), std::count(source.begin(), source.end(), '\n'));

  // A 3-D reference read with tex3D becomes a texture over a CUDA array
  // (tests/texture_array_test.cpp); a layered one stays, with the reason.
  const TexturePort volume = port_texture_references(source, "k.cu", "sample");
  EXPECT_TRUE(volume.refusal.empty()) << volume.refusal;
  ASSERT_EQ(volume.ported.size(), 1u);
  EXPECT_NE(volume.source.find("sample(float* out, cudaTextureObject_t volumeTexture)"), std::string::npos)
      << volume.source;
  EXPECT_NE(volume.source.find("tex3D<float>(volumeTexture, 0.5f, 0.5f, 0.5f)"), std::string::npos) << volume.source;
  std::string layered_source = source;
  layered_source.replace(layered_source.find("float, 3,"), std::string("float, 3,").size(),
                         "float, cudaTextureType2DLayered,");
  const TexturePort layered = port_texture_references(layered_source, "k.cu", "sample");
  EXPECT_TRUE(layered.ported.empty());
  EXPECT_EQ(layered.source, layered_source);
  EXPECT_NE(layered.refusal.find("texture reference 'volumeTexture' (line 3): it is of type "
                                 "cudaTextureType2DLayered"), std::string::npos) << layered.refusal;
  // A helper that reads a reference gets it as a parameter, and its calls pass it.
  const TexturePort helper = port_texture_references(
      "texture<float> t;\n__device__ float at(int i) { return tex1Dfetch(t, i); }\n"
      "__device__ float zero() { return 0.f; }\n"
      "__global__ void k(float* o) { o[threadIdx.x] = at(threadIdx.x) + zero(); }\n", "k.cu", "k");
  EXPECT_TRUE(helper.refusal.empty()) << helper.refusal;
  EXPECT_NE(helper.source.find("__device__ float at(int i, cudaTextureObject_t t) { return tex1Dfetch<float>(t, i); }"),
            std::string::npos) << helper.source;
  EXPECT_NE(helper.source.find("o[threadIdx.x] = at(threadIdx.x, t) + zero(); }"), std::string::npos) << helper.source;
  EXPECT_NE(helper.source.find("__global__ void k(float* o, cudaTextureObject_t t)"), std::string::npos) << helper.source;
  // ... but not a template helper, nor one called by a helper that lacks it.
  const TexturePort templated = port_texture_references(
      "texture<float> t;\ntemplate <int S> __device__ float at(int i) { return tex1Dfetch(t, i * S); }\n"
      "__global__ void k(float* o) { o[threadIdx.x] = at<2>(threadIdx.x); }\n", "k.cu", "k");
  EXPECT_NE(templated.refusal.find("read in the template helper 'at'"), std::string::npos) << templated.refusal;
  EXPECT_EQ(templated.source.find("cudaTextureObject_t"), std::string::npos);
  const TexturePort nested = port_texture_references(
      "texture<float> t;\n__device__ float at(int i) { return tex1Dfetch(t, i); }\n"
      "__device__ float twice(int i) { return 2.f * at(i); }\n"
      "__global__ void k(float* o) { o[threadIdx.x] = twice(threadIdx.x); }\n", "k.cu", "k");
  EXPECT_NE(nested.refusal.find("'twice' calls 'at', which reads texture reference 't', and does not read it itself"),
            std::string::npos) << nested.refusal;

  // gi init on the file: no FILL, two texture buffers, and the port builds and passes its check.
  const InitRun run("weigh", source, "--entry weigh --size n=100000 --check");
  const test::CommandOutput& init = run.result;
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("note: CUDA 12 removed texture references"), std::string::npos) << init.output;
  const json spec = json::parse(read(run.dir / "spec.json"));
  ASSERT_EQ(spec["parameters"].size(), 4u);
  EXPECT_EQ(spec["parameters"][2]["name"], "pointTexture");
  EXPECT_EQ(spec["parameters"][2]["texture"], true);
  EXPECT_EQ(spec["parameters"][3]["type"], "float");
  run.expect_emulated_check_passed();
}

// A file whose other parts NVRTC cannot build (a texture reference, gone
// since CUDA 12, used by another kernel) is found at gi init without a GPU,
// and the entry kernel is cut out of it: what it does not use is blanked,
// every line kept where it was. Where the cut does not build either, gi init
// says so and --check stops there.
TEST(SpecInference, AFileNvrtcCannotBuildIsCutDownToTheKernel) {
  const fs::path root = fs::temp_directory_path() / ("gi-init-nvrtc-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string file = "texture<float, 1, cudaReadModeElementType> t_values;\n"
                           "__constant__ float c_table[16];\n"
                           "template <int N> __device__ float times(float v) { return N * v; }\n"
                           "__device__ float twice(float v) { return times<2>(v); }\n"
                           "__global__ void fetch(float* out, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) out[i] = tex1Dfetch(t_values, i) + c_table[i % 16];\n"
                           "}\n"
                           "__global__ void scale(const float* in, float* out, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) out[i] = twice(in[i]);\n"
                           "}\n";
  const KernelCut cut = cut_kernel(file, "scale.cu", "scale", false);
  EXPECT_EQ(std::count(cut.source.begin(), cut.source.end(), '\n'), std::count(file.begin(), file.end(), '\n'));
  EXPECT_EQ(cut.source.find("t_values"), std::string::npos) << cut.source;
  EXPECT_EQ(cut.source.find("c_table"), std::string::npos) << cut.source;
  EXPECT_EQ(cut.source.find("fetch"), std::string::npos) << cut.source;
  EXPECT_NE(cut.source.find("template <int N> __device__ float times"), std::string::npos) << cut.source;
  ASSERT_EQ(cut.dropped.size(), 3u);
  EXPECT_EQ(cut.dropped[0], "kernel 'fetch' (lines 5-8)");
  EXPECT_EQ(cut.dropped[1], "declaration of 't_values' (line 1)");
  EXPECT_EQ(cut.dropped[2], "declaration of 'c_table' (line 2)");

  const fs::path source = root / "scale.cu";
  std::ofstream(source) << file;
  const fs::path dir = root / "user/scale";
  const test::CommandOutput init =
      test::run_gi("init \"" + source.string() + "\" --entry scale --out \"" + dir.string() + "\" --size n=100000 --check");
  EXPECT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("note: your file does not compile with NVRTC as a whole"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("texture is not a template"), std::string::npos) << init.output;
  // A kernel that itself needs what NVRTC cannot build (a layered texture
  // reference, which gi cannot port): no cut helps.
  std::ofstream(source) << "texture<float, cudaTextureType2DLayered, cudaReadModeElementType> t_values;\n"
                           "__global__ void fetch(float* out, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) out[i] = tex2DLayered(t_values, i, 0, 0);\n"
                           "}\n";
  const test::CommandOutput stuck = test::run_gi("init \"" + source.string() + "\" --out \"" + (root / "user/fetch").string() +
                                                 "\" --size n=100000 --check");
  EXPECT_NE(stuck.exit_code, 0) << stuck.output;
  EXPECT_NE(stuck.output.find("nor cut down to 'fetch' and what it uses"), std::string::npos) << stuck.output;
  fs::remove_all(root);
}

// A user's file with host code of types neither NVRTC nor the emulator's
// g++ knows (a cuBLAS status check, its header cut away): every compile sets
// host code aside, the emulator's coverage run too.
TEST(SpecInference, HostCodeInAUsersFileIsSetAsideInTheEmulatorsCoverageRun) {
  const fs::path root = fs::temp_directory_path() / ("gi-init-host-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path source = root / "halve.cu";
  std::ofstream(source) << "void check(cublasStatus_t status) {\n"
                           "    if (status != CUBLAS_STATUS_SUCCESS) exit(1);\n"
                           "}\n"
                           "__global__ void halve(const float* in, float* out, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) out[i] = 0.5f * in[i];\n"
                           "}\n";
  const test::CommandOutput init = test::run_gi("init \"" + source.string() + "\" --out \"" +
                                                (root / "user/halve").string() + "\" --size n=100000 --check");
  EXPECT_EQ(init.exit_code, 0) << init.output;
  if (fitness::probe_cuda().gpus.empty()) {
    EXPECT_NE(init.output.find("coverage passed"), std::string::npos) << init.output;
  }
  fs::remove_all(root);
}

// A float input the kernel tests against two numbers (joint_histogram64's
// is_grey: 0 <= v < 256) is drawn across them on the timed workload, so the
// bins fill as a histogram's do, and an eighth of the width past each end on
// the small check, so that each of the tests goes both ways. --like wins.
TEST(SpecInference, InputsAreDrawnAcrossTheValuesTheKernelTests) {
  const SpecScaffold s = scaffold_spec(read(kernel_file("joint_histogram64")), "joint_histogram64.cu", std::nullopt,
                                       "user", parse_init_sizes({"pixels=4194304"}, {"floating:normal(128,40)"}));
  const auto& w = s.spec["workloads"];
  EXPECT_EQ(w["train"]["variables"]["inputs"]["reference"], nlohmann::ordered_json::parse(R"({"uniform": [0, 256]})"));
  EXPECT_EQ(w["train_checks"][0]["variables"]["inputs"]["reference"],
            nlohmann::ordered_json::parse(R"({"uniform": [-32, 288]})"));
  EXPECT_NE(w["train_checks"][0]["purpose"].get<std::string>().find("values of reference past both ends"),
            std::string::npos) << w["train_checks"][0]["purpose"];
  for (const auto& v : w["validate"])
    EXPECT_EQ(v["variables"]["inputs"]["floating"], nlohmann::ordered_json::parse(R"({"normal": [128, 40]})"));
  EXPECT_EQ(w["validate"][3]["variables"]["inputs"]["reference"], nlohmann::ordered_json::parse(R"({"uniform": [-64, 320]})"));
  bool said = false;
  for (const std::string& line : s.inferred) said = said || line.find("tested against 0 and 256") != std::string::npos;
  EXPECT_TRUE(said);
  // An 8-bit image's grey levels index a histogram: every value of the type
  // is a bin, so the image is drawn over all of them.
  const SpecScaffold grey = scaffold_spec(
      "__global__ void h(const unsigned char* img, unsigned* hist, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) atomicAdd(&hist[img[i]], 1u);\n"
      "}\n",
      "h.cu", std::nullopt, "user", parse_init_sizes({"n=1000000"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(grey.spec.dump())).empty()) << grey.spec.dump(2);
  EXPECT_EQ(grey.spec["parameters"][1]["count"], "256");
  EXPECT_EQ(grey.spec["workloads"]["train"]["variables"]["inputs"]["img"],
            nlohmann::ordered_json::parse(R"({"uniform": [0, 255]})"));
}

// joint_histogram64 with padding tested above only: a grey value below 0
// would bin below the histogram, so nothing bounds the bin.
TEST(SpecInference, WhereTheKernelDoesNotSayFillStaysWithTheReason) {
  std::string source = read(kernel_file("joint_histogram64"));
  const std::string grey = "return value >= 0.0f && value < 256.0f;";
  ASSERT_NE(source.find(grey), std::string::npos);
  source.replace(source.find(grey), grey.size(), "return value < 256.0f;");
  const SpecScaffold s = scaffold_spec(source, "joint_histogram64.cu", std::nullopt, "user",
                                       parse_init_sizes({"pixels=4194304"}, {"reference:uniform(0,256)"}));
  const auto left = fitness::fields_to_fill(json::parse(s.spec.dump()));
  ASSERT_FALSE(left.empty());
  bool bins = false;
  for (const auto& f : left) bins = bins || (f.find("'histogram'") != std::string::npos && f.find("computed from loaded data") != std::string::npos);
  EXPECT_TRUE(bins) << left.front();
  EXPECT_EQ(s.spec["workloads"]["train"]["variables"]["inputs"]["reference"], nlohmann::ordered_json::parse(R"({"uniform": [0, 256]})"));
  // Sizes and distributions are checked.
  EXPECT_THROW(parse_init_sizes({"n"}, {}), std::runtime_error);
  // A name is another size's (a tied size): one the kernel lacks is refused when drafting.
  EXPECT_THROW(scaffold_spec(read(kernel_file("histogram256")), "h.cu", std::nullopt, "user",
                             parse_init_sizes({"n=lots"}, {})),
               std::runtime_error);
  EXPECT_THROW(parse_init_sizes({"n=lots*"}, {}), std::runtime_error);
  EXPECT_THROW(parse_init_sizes({}, {"x:gaussian(0,1)"}), std::runtime_error);
  EXPECT_THROW(parse_init_sizes({}, {"x:uniform(0)"}), std::runtime_error);
  EXPECT_THROW(scaffold_spec(read(kernel_file("histogram256")), "h.cu", std::nullopt, "user",
                             parse_init_sizes({"m=3"}, {})),
               std::runtime_error)
      << "no parameter m";
}

}  // namespace
}  // namespace gi
