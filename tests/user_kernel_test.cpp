// A user's own kernel (issue 13): `gi init` drafts the spec from the
// kernel's signature with FILL marks, the "random" generator makes inputs
// from the distributions the spec names, and the seed is its own reference
// (its GPU outputs and their run-to-run spread, or on the CPU emulator its
// unpatched run). The GPU part is skipped without a CUDA device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/random_workload.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/seed_reference.hpp"
#include "gi/library/seed_emulation.hpp"
#include "gi/seed/seed.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kExample = test::source_dir() / "examples/box_filter";

// A seed folder made from the example kernel and its filled spec, in a
// family folder of its own ("user") as gi init makes it.
class UserSeed : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir);
    fs::copy_file(kExample / "box_filter_rows.cu", dir / "kernel.cu");
    spec_json = json::parse(read_text_file(kExample / "filled_spec.json"));
    write_spec();
  }
  void TearDown() override { fs::remove_all(root); }
  void write_spec() const { std::ofstream(dir / "spec.json") << spec_json.dump(2); }
  // The generator's error with the training workload's inputs set to `inputs`, or "no error".
  std::string generator_error(const json& inputs) {
    spec_json["workloads"]["train"]["variables"]["inputs"] = inputs;
    write_spec();
    try {
      const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
      fitness::random_workload(spec, spec.train, 1);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }

  const fs::path root = fs::temp_directory_path() / ("gi-user-kernel-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
  const fs::path dir = root / "user/box_filter_rows";
  json spec_json;
};

std::vector<float> floats(const std::vector<std::byte>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST_F(UserSeed, TheRandomGeneratorDrawsWhatTheSpecNamesAndRepeatsForASeed) {
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  EXPECT_TRUE(spec.reference_is_seed);
  const fitness::Workload a = fitness::random_workload(spec, spec.train, 5);
  const fitness::Workload b = fitness::random_workload(spec, spec.train, 5);
  const fitness::Workload c = fitness::random_workload(spec, spec.train, 6);
  EXPECT_EQ(a.variables.at("width"), 4096);
  EXPECT_EQ(a.variables.at("radius"), 4);
  ASSERT_EQ(a.inputs.at("in").size(), 4u * 4096 * 2048);
  EXPECT_EQ(a.inputs.at("in"), b.inputs.at("in"));
  EXPECT_NE(a.inputs.at("in"), c.inputs.at("in"));
  const std::vector<float> v = floats(a.inputs.at("in"));
  double lo = 1, hi = -1, mean = 0;
  for (float x : v) {
    lo = std::min<double>(lo, x);
    hi = std::max<double>(hi, x);
    mean += x;
  }
  mean /= static_cast<double>(v.size());
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.999);
  EXPECT_GT(hi, 0.999);
  EXPECT_NEAR(mean, 0.0, 0.01);
}

TEST_F(UserSeed, IntegerInputsAreWholeNumbersWithBothEndsAndBoundsMayBeExpressions) {
  // The example has no int input: make its radius a buffer of one per row.
  spec_json["parameters"][4] = {{"name", "radius"}, {"type", "int"}, {"role", "in"}, {"count", "height"}};
  std::string kernel = read_text_file(dir / "kernel.cu");
  kernel.replace(kernel.find("int radius)"), 11, "const int* radius)");
  std::ofstream(dir / "kernel.cu") << kernel;
  spec_json["workloads"]["train"]["variables"]["inputs"]["radius"] = {{"uniform", {0, "height - 2045"}}};
  write_spec();
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  const fitness::Workload w = fitness::random_workload(spec, spec.train, 1);
  std::vector<std::int32_t> r(2048);
  std::memcpy(r.data(), w.inputs.at("radius").data(), r.size() * 4);
  std::set<int> seen(r.begin(), r.end());
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2, 3}));
}

TEST_F(UserSeed, BadDistributionsNameTheWorkloadAndTheParameter) {
  const auto error_for = [&](const json& inputs) { return generator_error(inputs); };
  EXPECT_NE(error_for(json::object()).find("workloads.train.variables.inputs: no distribution for input 'in'"),
            std::string::npos);
  EXPECT_NE(error_for({{"in", {{"uniform", {1, 0}}}}}).find("inputs.in.uniform: the upper bound is below the lower"),
            std::string::npos);
  EXPECT_NE(error_for({{"in", {{"poisson", {1}}}}}).find("unknown distribution 'poisson'"), std::string::npos);
  EXPECT_NE(error_for({{"in", {{"uniform", {0, 1}}}}, {"out", {{"uniform", {0, 1}}}}})
                .find("inputs.out: 'out' is no in/inout parameter"),
            std::string::npos);
  EXPECT_NE(error_for({{"in", {{"uniform", {0, "nowhere"}}}}}).find("inputs.in.uniform[1]"), std::string::npos);
}

// A buffer of several fields one after another (CFD's density, momenta and
// energy) is drawn in pieces, each from its own distribution; lengths may be
// expressions, and the last piece is the rest of the buffer. A buffer drawn
// as one piece is the same as with the plain distribution.
TEST_F(UserSeed, APieceWiseDistributionDrawsEachFieldFromItsOwn) {
  spec_json["workloads"]["train"]["variables"]["inputs"]["in"] = {
      {"pieces", {{{"length", "width"}, {"constant", 7}}, {{"length", 100}, {"uniform", {2, 3}}}, {{"uniform", {-5, -4}}}}}};
  write_spec();
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  const std::vector<float> v = floats(fitness::random_workload(spec, spec.train, 3).inputs.at("in"));
  ASSERT_EQ(v.size(), 4096u * 2048);
  for (std::size_t i = 0; i < 4096; ++i) ASSERT_EQ(v[i], 7.0f) << i;
  for (std::size_t i = 4096; i < 4196; ++i) ASSERT_TRUE(v[i] >= 2 && v[i] <= 3) << i << ": " << v[i];
  for (std::size_t i = 4196; i < v.size(); ++i) ASSERT_TRUE(v[i] >= -5 && v[i] <= -4) << i << ": " << v[i];
  // One piece draws exactly what the plain distribution draws.
  spec_json["workloads"]["train"]["variables"]["inputs"]["in"] = {{"pieces", {{{"uniform", {-1, 1}}}}}};
  write_spec();
  const fitness::KernelSpec one = fitness::load_kernel_spec(dir);
  spec_json["workloads"]["train"]["variables"]["inputs"]["in"] = {{"uniform", {-1, 1}}};
  write_spec();
  const fitness::KernelSpec plain = fitness::load_kernel_spec(dir);
  EXPECT_EQ(fitness::random_workload(one, one.train, 3).inputs.at("in"),
            fitness::random_workload(plain, plain.train, 3).inputs.at("in"));
}

TEST_F(UserSeed, BadPiecesNameThePieceAndWhatIsWrong) {
  const auto error_for = [&](const json& in) { return generator_error({{"in", in}}); };
  EXPECT_NE(error_for({{"pieces", {{{"uniform", {0, 1}}}, {{"uniform", {0, 1}}}}}}).find("inputs.in.pieces[0]: expected {\"length\""),
            std::string::npos);
  EXPECT_NE(error_for({{"pieces", {{{"length", 5}, {"uniform", {0, 1}}}}}}).find("pieces[0]: the last piece is the rest"),
            std::string::npos);
  EXPECT_NE(error_for({{"pieces", {{{"length", "width * height + 1"}, {"uniform", {0, 1}}}, {{"constant", 0}}}}})
                .find("pieces[0].length: the pieces so far hold 8388609 elements, more than the buffer's 8388608"),
            std::string::npos);
  EXPECT_NE(error_for({{"pieces", {{{"length", 4}, {"poisson", {1}}}, {{"constant", 0}}}}}).find("pieces[0]: unknown distribution 'poisson'"),
            std::string::npos);
  EXPECT_NE(error_for({{"pieces", json::array()}}).find("inputs.in: expected {\"pieces\""), std::string::npos);
}

// `--like NAME:DIST[LENGTH];...;DIST` gives the pieces.
TEST(InitSizes, LikeInPiecesGivesEachPieceItsLength) {
  const InitSizes s = parse_init_sizes({}, {"variables:uniform(1,2)[nelr];uniform(-0.1,0.1)[3*nelr];constant(5)",
                                            "x:normal(0,1)"});
  EXPECT_EQ(s.like.at("variables").dump(),
            R"({"pieces":[{"length":"nelr","uniform":[1,2]},{"length":"3*nelr","uniform":[-0.1,0.1]},{"constant":5}]})");
  EXPECT_EQ(s.like.at("x").dump(), R"({"normal":[0,1]})");
  EXPECT_EQ(parse_init_sizes({}, {"v:constant(1)[4];constant(2)"}).like.at("v").dump(),
            R"({"pieces":[{"length":4,"constant":1},{"constant":2}]})");
  const auto error_for = [](const std::string& like) {
    try {
      parse_init_sizes({}, {like});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_for("v:uniform(0,1);constant(2)").find("piece 1 'uniform(0,1)': expected DIST[LENGTH]"),
            std::string::npos);
  EXPECT_NE(error_for("v:uniform(0,1)[n];constant(2)[m]").find("piece 2 'constant(2)[m]': the last piece is the rest"),
            std::string::npos);
  EXPECT_NE(error_for("v:uniform(0,1)[n+];constant(2)").find("piece 1: 'n+' is no length"), std::string::npos);
  EXPECT_NE(error_for("v:uniform(0)[n];constant(2)").find("uniform takes two numbers"), std::string::npos);
}

TEST_F(UserSeed, WithoutAGpuRunOfTheSeedThereIsNoReferenceAndTheErrorSaysSo) {
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  try {
    fitness::prepare_workload(spec, "train:1", 1, std::nullopt);
    FAIL() << "a seed reference without a GPU run";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("reference: the spec makes the seed its own reference"), std::string::npos)
        << e.what();
  }
}

// The seed's outputs become the expected ones, and its spread widens the
// absolute tolerance, through the reference cache too. A stand-in of the GPU
// run (gi/evaluate/seed_reference.hpp installs the real one).
TEST_F(UserSeed, TheSeedsOutputsAndSpreadAreTheReferenceThroughTheCache) {
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  int runs = 0;
  fitness::set_seed_reference(spec.entry, {"stand-in", [&](const fitness::Workload& w) {
                                             ++runs;
                                             fitness::MeasuredReference m;
                                             const std::vector<float> in = floats(w.inputs.at("in"));
                                             m.outputs["out"] = std::vector<double>(in.begin(), in.end());
                                             m.spread_abs = 0.25;
                                             return m;
                                           }});
  const fs::path cache = root / "refs";
  for (int call = 0; call < 2; ++call) {
    const fitness::PreparedWorkload p = fitness::prepare_workload(spec, "train:1", 3, cache);
    EXPECT_EQ(p.reference_cache_hit, call == 1);
    EXPECT_DOUBLE_EQ(p.reference_spread_abs, 0.25);
    EXPECT_DOUBLE_EQ(p.tolerance.abs, spec.tolerance.abs + 0.5);
    ASSERT_EQ(p.expected.size(), 1u);
    EXPECT_EQ(p.expected[0].values.size(), 7000u);
  }
  EXPECT_EQ(runs, 1);
  fitness::set_seed_reference(spec.entry, {});
}

TEST(SpecScaffold, RolesFollowConstAndWritesAndEveryDecisionIsMarked) {
  const std::string source =
      "__global__ void k(const float* a, float* b, float* c, int n, float s) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) c[i] = s * a[i] + b[i];\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user");
  EXPECT_EQ(s.entry, "k");
  const auto& p = s.spec["parameters"];
  EXPECT_EQ(p[0]["role"], "in");
  EXPECT_EQ(p[1]["role"], "in") << "never written through: an input even without const";
  EXPECT_EQ(p[2]["role"], "out");
  EXPECT_EQ(p[3]["role"], "scalar");
  EXPECT_EQ(p[3]["value"], "n");
  EXPECT_EQ(s.spec["reference"], "seed");
  EXPECT_EQ(s.spec["workloads"]["train"]["generator"], "random");
  EXPECT_TRUE(s.spec["workloads"]["train"]["variables"]["inputs"].contains("b"));
  EXPECT_FALSE(s.spec["workloads"]["train"]["variables"]["inputs"].contains("c"));
  const auto left = fitness::fields_to_fill(json::parse(s.spec.dump()));
  const auto marked = [&](const std::string& path) {
    for (const auto& f : left)
      if (f.rfind(path + ": FILL", 0) == 0) return true;
    return false;
  };
  // Counts and the grid follow from `if (i < n)` (analysis/parameter_use.hpp);
  // the sizes are the user's (gi init --size n=...).
  EXPECT_FALSE(marked("parameters[0].count"));
  EXPECT_EQ(p[0]["count"], "n");
  EXPECT_FALSE(marked("launch.grid[0]"));
  EXPECT_EQ(s.spec["launch"]["grid"][0], "ceil_div(n, B)");
  EXPECT_TRUE(marked("workloads.train.variables.n"));
  EXPECT_TRUE(marked("workloads.validate[4].variables.s"));
  EXPECT_FALSE(marked("parameters[3].value"));
}

TEST(SpecScaffold, SeveralKernelsNeedAnEntryAndAnUnknownOneIsNamed) {
  const std::string source = "__global__ void first(float* a) { a[0] = 1; }\n__global__ void second(float* a) { a[1] = 2; }\n";
  try {
    scaffold_spec(source, "two.cu", std::nullopt, "user");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2 kernels (first, second): name the one to evolve with --entry"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(scaffold_spec(source, "two.cu", std::string("second"), "user").entry, "second");
  EXPECT_THROW(scaffold_spec(source, "two.cu", std::string("third"), "user"), std::runtime_error);
}

// The command as a user runs it: the folder, the list of fields to fill,
// a spec that does not load until they are filled, no second init over it.
TEST_F(UserSeed, GiInitMakesASeedFolderWhoseSpecListsWhatIsLeftToFill) {
  const fs::path out = root / "mine/box_filter_rows";
  const test::CommandOutput r =
      test::run_gi("init \"" + (kExample / "box_filter_rows.cu").string() + "\" --out \"" + out.string() + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // No --size: only the workloads' sizes are left (three scalars on seven
  // workloads) and the small check's purpose.
  EXPECT_NE(r.output.find("for kernel 'box_filter_rows' (22 fields to fill)"), std::string::npos) << r.output;
  EXPECT_EQ(read_text_file(out / "kernel.cu"), read_text_file(kExample / "box_filter_rows.cu"));
  try {
    fitness::load_kernel_spec(out);
    FAIL() << "a spec with FILL marks loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("fields still to fill (marked FILL by gi init):\n  workloads.train.variables.height: FILL"),
              std::string::npos)
        << e.what();
  }
  const json spec = json::parse(read_text_file(out / "spec.json"));
  EXPECT_EQ(spec["family"], "mine");
  const test::CommandOutput again =
      test::run_gi("init \"" + (kExample / "box_filter_rows.cu").string() + "\" --out \"" + out.string() + "\"");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.output.find("already holds a seed (--force replaces it)"), std::string::npos) << again.output;
}

// On the CPU emulator the unpatched seed is the reference: one run (the
// emulator is deterministic, so the spread is zero), checked here against
// the box filter's known answer so that a reference made from the variant
// under test could not pass.
TEST_F(UserSeed, OnTheEmulatorTheUnpatchedSeedsOutputsAreTheReference) {
  const Seed seed = load_seed(dir);
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  use_emulated_seed_as_reference(fitness::CpuEmulator{}, seed, spec);
  const fitness::PreparedWorkload p = fitness::prepare_workload(spec, "train:1", 9, std::nullopt);
  EXPECT_EQ(p.reference_spread_abs, 0.0);
  EXPECT_EQ(p.tolerance.abs, spec.tolerance.abs);
  const fitness::Workload w = fitness::random_workload(spec, spec.workload("train:1"), p.seed);
  const std::vector<float> in = floats(w.inputs.at("in"));
  const int width = 1000, height = 7, radius = 3;
  ASSERT_EQ(p.expected.size(), 1u);
  ASSERT_EQ(p.expected[0].values.size(), static_cast<std::size_t>(width * height));
  double worst = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int dx = -radius; dx <= radius; ++dx) sum += in[y * width + std::clamp(x + dx, 0, width - 1)];
      worst = std::max(worst, std::abs(p.expected[0].values[y * width + x] - sum / (2 * radius + 1)));
    }
  EXPECT_LT(worst, 1e-5);
  fitness::set_seed_reference(spec.entry, {});
}

// `gi emulate` on the seed folder made from the example and its filled
// spec: the seed passes against itself, a patch that deletes the output
// write fails (its outputs stay the NaN fill).
TEST_F(UserSeed, GiEmulateChecksAVariantAgainstTheSeedAsItsOwnReference) {
  const std::string cache = " --cache \"" + (root / "cache").string() + "\"";
  const test::CommandOutput seed = test::run_gi("emulate \"" + dir.string() + "\"" + cache);
  EXPECT_EQ(seed.exit_code, 0) << seed.output;
  EXPECT_NE(seed.output.find("\"workload\": \"train:1\""), std::string::npos) << seed.output;
  EXPECT_NE(seed.output.find("\"status\": \"ok\""), std::string::npos) << seed.output;
  EXPECT_NE(seed.output.find("\"values_checked\": 7000"), std::string::npos) << seed.output;

  std::ofstream(root / "no_write.patch") << "<_kernel.cu_15>\n";
  const test::CommandOutput wrong =
      test::run_gi("emulate \"" + dir.string() + "\" --patch \"" + (root / "no_write.patch").string() + "\"" + cache);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("\"status\": \"wrong_output\""), std::string::npos) << wrong.output;
}

// `gi check --workload` names workloads, `all` every one; a name the spec
// has no workload for is an error before any GPU is touched.
TEST_F(UserSeed, GiCheckRefusesAWorkloadTheSpecDoesNotHave) {
  const test::CommandOutput run = test::run_gi("check \"" + dir.string() + "\" --workload train --workload validate:99");
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("no workload 'validate:99'"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("\"status\""), std::string::npos) << "nothing ran: " << run.output;
}

// On a GPU, `--workload all` runs every training and held-out workload in
// one process and prints their reports as one JSON array.
TEST_F(UserSeed, OnAGpuGiCheckRunsEveryWorkloadInOneProcess) {
  const auto cuda = fitness::probe_cuda();
  if (!cuda.driver_ok || cuda.gpus.empty()) GTEST_SKIP() << "no CUDA device: " << cuda.message;
  const test::CommandOutput run =
      test::run_gi("check \"" + dir.string() + "\" --workload all --cache \"" + (root / "cache").string() + "\"");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  const std::size_t open = run.output.find("[\n{");
  ASSERT_NE(open, std::string::npos) << run.output;
  const json reports = json::parse(run.output.substr(open, run.output.rfind(']') + 1 - open));
  ASSERT_EQ(reports.size(), spec.training_workloads().size() + spec.validate.size()) << run.output;
  EXPECT_EQ(reports.front()["workload"], "train");
  EXPECT_EQ(reports.back()["workload"], "validate:" + std::to_string(spec.validate.size() - 1));
  for (const json& r : reports) EXPECT_EQ(r["status"], "ok") << r.dump();
}

// On a GPU: the seed's own outputs are the reference. The box filter's
// answer is known, so the reference is checked against it here.
TEST_F(UserSeed, OnAGpuTheSeedsOutputsAreTheReference) {
  const auto cuda = fitness::probe_cuda();
  if (!cuda.driver_ok || cuda.gpus.empty()) GTEST_SKIP() << "no CUDA device: " << cuda.message;
  const Seed seed = load_seed(dir);
  const fitness::KernelSpec spec = fitness::load_kernel_spec(dir);
  use_seed_as_reference(seed, spec, 0, root / "cache");
  const fitness::PreparedWorkload p = fitness::prepare_workload(spec, "train:1", 9, root / "cache" / "reference");
  EXPECT_DOUBLE_EQ(p.reference_spread_abs, 0.0) << "a box filter repeats bit for bit";
  const fitness::Workload w = fitness::random_workload(spec, spec.workload("train:1"), p.seed);
  const std::vector<float> in = floats(w.inputs.at("in"));
  const int width = 1000, height = 7, radius = 3;
  ASSERT_EQ(p.expected.size(), 1u);
  ASSERT_EQ(p.expected[0].values.size(), static_cast<std::size_t>(width * height));
  double worst = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int dx = -radius; dx <= radius; ++dx) sum += in[y * width + std::clamp(x + dx, 0, width - 1)];
      worst = std::max(worst, std::abs(p.expected[0].values[y * width + x] - sum / (2 * radius + 1)));
    }
  EXPECT_LT(worst, 1e-5);
  fitness::set_seed_reference(spec.entry, {});
}

}  // namespace
}  // namespace gi
