// gi init's inference (issue 29): element counts, roles, the grid and the
// work item read from a kernel (analysis/parameter_use.hpp), sizes as
// polynomials (analysis/symbolic_size.hpp), and the spec drafted from one
// problem size (gi/seed/spec_scaffold.hpp): on the plain user kernels of
// tests/data/user and the README's box filter it leaves no FILL, matches
// the hand-written counts and min_bytes, and its training check passes in
// the CPU emulator; where the kernel does not say, FILL stays with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "analysis/parameter_use.hpp"
#include "analysis/symbolic_size.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/expression.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "grammar/kernel_structure.hpp"
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

analysis::ParameterUse use_of(const std::string& source) {
  const grammar::ParsedKernel k = grammar::parse_kernel(source, "k.cu");
  for (const auto& f : k.functions)
    if (f.is_kernel) return analysis::analyse_parameter_use(k, f);
  throw std::runtime_error("no kernel");
}

const analysis::PointerUse& pointer(const analysis::ParameterUse& u, const std::string& name) {
  for (const auto& p : u.pointers)
    if (p.name == name) return p;
  throw std::runtime_error("no pointer " + name);
}

std::string count(const analysis::ParameterUse& u, const std::string& name) {
  const auto& p = pointer(u, name);
  return p.count ? p.count->text() : "none: " + p.refusal;
}

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
      "  float* p = q;\n"
      "  p[0] = 1.0f;\n"
      "}\n");
  EXPECT_TRUE(pointer(u, "hist").index_from_data);
  EXPECT_NE(pointer(u, "hist").refusal.find("computed from loaded data"), std::string::npos) << pointer(u, "hist").refusal;
  EXPECT_NE(pointer(u, "v").refusal.find("nothing bounds the index 'i'"), std::string::npos) << pointer(u, "v").refusal;
  EXPECT_TRUE(pointer(u, "idx").values_index) << "its values index v: no random integers for it";
  EXPECT_NE(pointer(u, "q").refusal.find("used as a pointer"), std::string::npos) << pointer(u, "q").refusal;
  EXPECT_EQ(pointer(u, "hist").atomic, "add");
}

TEST(ParameterUse, ACompareAndSwapHelperIsTheAtomicItImplements) {
  const auto u = use_of(read(fs::path(GI_TEST_DATA) / "user/vector_max/kernel.cu"));
  EXPECT_EQ(pointer(u, "result").atomic, "max");
  EXPECT_EQ(count(u, "result"), "1");
  EXPECT_EQ(count(u, "values"), "n");
}

TEST(InitWorkloads, SmallChecksAreOddAndHeldOutOnesVaryShapeAndReachTheValues) {
  const SizeSet given = {{"rows", 4096}, {"cols", 1024}, {"scale", 0.5}};
  const SizeSet small = small_check_sizes(given, {"cols", "rows"});
  EXPECT_EQ(small.at("cols"), 37);
  EXPECT_EQ(small.at("rows"), 29);
  EXPECT_EQ(small.at("scale"), 0.5) << "not a size: kept";
  EXPECT_EQ(small_check_sizes({{"n", 4e6}}, {"n"}).at("n"), 1003);
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

TEST(SpecInference, PlainKernelsGetASpecWithNoFillThatMatchesTheHandWrittenOne) {
  const std::vector<Inferred> kernels = {
      {"count_positive", {"n=4194304", "threshold=0.25"}},  {"dot_product", {"n=4194304"}},
      {"masked_mean", {"n=4194304"}},     {"row_sum", {"rows=4096", "cols=1024"}},
      {"row_max", {"rows=4096", "cols=1024"}},       {"histogram256", {"n=4194304"}},
      {"slice_sums", {"nx=128", "ny=128", "nz=128"}}, {"vector_max", {"n=4194304"}},
      {"weighted_sum", {"n=4194304"}},    {"box_filter", {"width=4096", "height=1024", "radius=3"}}};
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

TEST(SpecInference, WhereTheKernelDoesNotSayFillStaysWithTheReason) {
  const SpecScaffold s = scaffold_spec(read(kernel_file("joint_histogram64")), "joint_histogram64.cu", std::nullopt, "user",
                                       parse_init_sizes({"pixels=4194304"}, {"reference:uniform(0,256)"}));
  const auto left = fitness::fields_to_fill(json::parse(s.spec.dump()));
  ASSERT_FALSE(left.empty());
  bool bins = false;
  for (const auto& f : left) bins = bins || (f.find("'histogram'") != std::string::npos && f.find("computed from loaded data") != std::string::npos);
  EXPECT_TRUE(bins) << left.front();
  EXPECT_EQ(s.spec["workloads"]["train"]["variables"]["inputs"]["reference"], nlohmann::ordered_json::parse(R"({"uniform": [0, 256]})"));
  // Sizes and distributions are checked.
  EXPECT_THROW(parse_init_sizes({"n"}, {}), std::runtime_error);
  EXPECT_THROW(parse_init_sizes({"n=lots"}, {}), std::runtime_error);
  EXPECT_THROW(parse_init_sizes({}, {"x:gaussian(0,1)"}), std::runtime_error);
  EXPECT_THROW(parse_init_sizes({}, {"x:uniform(0)"}), std::runtime_error);
  EXPECT_THROW(scaffold_spec(read(kernel_file("histogram256")), "h.cu", std::nullopt, "user",
                             parse_init_sizes({"m=3"}, {})),
               std::runtime_error)
      << "no parameter m";
}

}  // namespace
}  // namespace gi
