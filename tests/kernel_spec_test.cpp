// Kernel specs: the seeds' specs load and match their kernels; malformed
// specs give errors naming the file and the JSON path; launch plans and
// expected outputs are built as the spec says.
#include "fitness/workload/kernel_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "grammar/grammar.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;
using nlohmann::json;

const fs::path kSeeds = fs::path(GI_SOURCE_DIR) / "seeds";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kSeedDirs[] = {"bspline/deformation_field", "resampling/trilinear", "tools/convolution_x"};

TEST(KernelSpec, EverySeedSpecLoadsAndMatchesItsKernel) {
  for (const char* dir : kSeedDirs) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = load_kernel_spec(kSeeds / dir);
    const std::string source = read(kSeeds / dir / "kernel.cu");
    const auto g = gi::grammar::Grammar::from_source(source, "kernel.cu");
    const gi::grammar::Function* f = nullptr;
    for (const auto& fn : g.parsed().functions)
      if (fn.is_kernel && fn.name == spec.entry) f = &fn;
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->params.size(), spec.parameters.size());
    for (std::size_t i = 0; i < spec.parameters.size(); ++i) {
      EXPECT_EQ(spec.parameters[i].name, f->params[i].name);
      EXPECT_EQ(spec.parameters[i].is_buffer(), f->params[i].pointer);
    }
    EXPECT_GE(spec.validate.size(), 5u);
    EXPECT_FALSE(spec.tolerance_note.empty());
    EXPECT_GT(spec.tolerance.abs + spec.tolerance.rel, 0);
    EXPECT_NE(std::find(spec.block_sizes.begin(), spec.block_sizes.end(), spec.default_block_size),
              spec.block_sizes.end());
    EXPECT_TRUE(has_generator(spec.train.generator));
    EXPECT_TRUE(has_reference(spec.entry));
  }
}

// Every seed's training checks: small workloads with a purpose, prepared
// (generated, referenced) fast enough to be redone every generation.
TEST(KernelSpec, EveryTrainingCheckIsSmallAndHasAPurpose) {
  std::size_t seeds = 0, checks = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSeeds)) {
    if (entry.path().filename() != "spec.json") continue;
    const KernelSpec spec = load_kernel_spec(entry.path());
    ++seeds;
    for (const std::string& which : spec.training_workloads()) {
      if (which == "train") continue;
      SCOPED_TRACE(spec.display_path + " " + which);
      ++checks;
      EXPECT_GE(spec.workload(which).purpose.size(), 20u);
      const auto t0 = std::chrono::steady_clock::now();
      const PreparedWorkload p = prepare_workload(spec, which, 7);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::size_t bytes = 0;
      for (const BufferArg& b : p.plan.buffers) bytes += b.count * element_bytes(b.type);
      EXPECT_LE(bytes, std::size_t{8} << 20) << "a training check should move a few MB at most";
      EXPECT_GT(p.checked_values, 0u);
      // The target is well under 0.1 s; the bound leaves room for a loaded machine.
      EXPECT_LT(seconds, 2.0);
    }
  }
  EXPECT_GE(seeds, 38u);
  EXPECT_GE(checks, 27u);
}

TEST(KernelSpec, BsplineSpecFields) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "bspline/deformation_field/spec.json");
  EXPECT_EQ(spec.entry, "bspline_deformation_field");
  EXPECT_EQ(spec.family, "bspline");
  const ParamSpec* grid = spec.find_parameter("controlPointGrid");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->type, ElementType::F32x4);
  EXPECT_EQ(grid->role, ParamRole::In);
  const ParamSpec* out = spec.find_parameter("deformationField");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->role, ParamRole::Out);
  EXPECT_TRUE(out->written_all);
  EXPECT_EQ(out->checked_components, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(spec.find_parameter("spacingX")->type, ElementType::F32);
  EXPECT_EQ(spec.find_parameter("activeVoxelNumber")->role, ParamRole::Scalar);
  EXPECT_EQ(&spec.workload("train"), &spec.train);
  EXPECT_EQ(&spec.workload("validate:1"), &spec.validate[1]);
  EXPECT_EQ(spec.validate[0].seed, 1001u);
  EXPECT_EQ(spec.kernel_path().filename(), "kernel.cu");
}

TEST(KernelSpec, TrilinearOutputIsWrittenAtActiveVoxelsOnly) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "resampling/trilinear");
  const ParamSpec* out = spec.find_parameter("warpedImage");
  ASSERT_NE(out, nullptr);
  EXPECT_FALSE(out->written_all);
  EXPECT_EQ(out->written_indices, "activeVoxels");
  EXPECT_EQ(out->checked_components, (std::vector<int>{0}));
}

TEST(KernelSpec, UnknownWorkloadNames) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "tools/convolution_x");
  for (const char* bad : {"validate:99", "validate:", "validate:x", "training", "validate:-1", "train:2", "train:x"}) {
    try {
      spec.workload(bad);
      ADD_FAILURE() << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("spec.json: no workload '" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
}

// Malformed specs, as edits of the B-spline seed's spec, checked in memory.
class MalformedSpec : public ::testing::Test {
 protected:
  json spec = json::parse(read(kSeeds / "bspline/deformation_field/spec.json"));
  std::string kernel = read(kSeeds / "bspline/deformation_field/kernel.cu");

  // The error message, or "" (with a test failure) if it loaded.
  std::string error(const json& j) const {
    try {
      parse_kernel_spec(j, "seeds/x/y/spec.json", kernel, "kernel.cu");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "loaded without error";
    return "";
  }
  void expect_error(const json& j, const std::string& starts_with, const std::string& contains = "") const {
    const std::string m = error(j);
    EXPECT_EQ(m.rfind(starts_with, 0), 0u) << m;
    EXPECT_NE(m.find(contains), std::string::npos) << m;
  }
};

TEST_F(MalformedSpec, TheUnchangedSpecLoads) {
  EXPECT_NO_THROW(parse_kernel_spec(spec, "seeds/x/y/spec.json", kernel, "kernel.cu"));
}

TEST_F(MalformedSpec, MissingEntry) {
  spec.erase("entry");
  expect_error(spec, "seeds/x/y/spec.json: entry: missing required field");
}

TEST_F(MalformedSpec, EntryThatIsNoKernel) {
  spec["entry"] = "bspline_basis";
  expect_error(spec, "seeds/x/y/spec.json: entry: no __global__ function 'bspline_basis' in kernel.cu",
               "kernels there: bspline_deformation_field");
}

TEST_F(MalformedSpec, BadRole) {
  spec["parameters"][3]["role"] = "output";
  expect_error(spec, "seeds/x/y/spec.json: parameters[3].role: expected one of in, out, inout, scalar",
               "found 'output'");
}

TEST_F(MalformedSpec, BadType) {
  spec["parameters"][0]["type"] = "float8";
  expect_error(spec, "seeds/x/y/spec.json: parameters[0].type: expected one of int, unsigned, float");
}

TEST_F(MalformedSpec, TypeDiffersFromTheKernel) {
  spec["parameters"][9]["type"] = "double";
  expect_error(spec, "seeds/x/y/spec.json: parameters[9].type: 'double' does not match the type 'float'");
}

// A vector scalar's value is one expression per component.
TEST_F(MalformedSpec, VectorScalar) {
  spec["parameters"][2]["type"] = "int4";
  expect_error(spec, "seeds/x/y/spec.json: parameters[2].value: int4 takes an array of 4 expressions (x, y, z, w), "
                     "found a string");
  spec["parameters"][2]["value"] = json::array({1, 2, 3});
  expect_error(spec, "seeds/x/y/spec.json: parameters[2].value: int4 takes an array of 4 expressions", "array of 3");
  spec["parameters"][2]["value"] = json::array({1, 2, 3, 4});
  expect_error(spec, "seeds/x/y/spec.json: parameters[2].type: 'int4' does not match the type 'int'");
}

TEST_F(MalformedSpec, BadCountExpression) {
  spec["parameters"][0]["count"] = "controlPointDimX * * 2";
  expect_error(spec, "seeds/x/y/spec.json: parameters[0].count: expression 'controlPointDimX * * 2' at position 20");
}

TEST_F(MalformedSpec, CountOfWrongJsonType) {
  spec["parameters"][1]["count"] = json::array({1});
  expect_error(spec, "seeds/x/y/spec.json: parameters[1].count: expected an expression");
}

TEST_F(MalformedSpec, ScalarWithoutValue) {
  spec["parameters"][4].erase("value");
  expect_error(spec, "seeds/x/y/spec.json: parameters[4].value: missing required field");
}

TEST_F(MalformedSpec, ParameterOrderMismatchNamesBoth) {
  std::swap(spec["parameters"][0], spec["parameters"][1]);
  expect_error(spec, "seeds/x/y/spec.json: parameters[0].name: 'activeVoxels' does not match kernel.cu parameter 1",
               "'controlPointGrid'");
}

TEST_F(MalformedSpec, MissingAndExtraParameters) {
  json fewer = spec;
  fewer["parameters"].erase(fewer["parameters"].end() - 1);
  expect_error(fewer, "seeds/x/y/spec.json: parameters: lists 12 parameters but bspline_deformation_field",
               "missing 'deformationField'");
  json more = spec;
  more["parameters"].push_back({{"name", "extra"}, {"type", "int"}, {"role", "scalar"}, {"value", 1}});
  expect_error(more, "seeds/x/y/spec.json: parameters[13]: 'extra' is not a parameter of bspline_deformation_field");
}

TEST_F(MalformedSpec, PointerDeclaredScalar) {
  spec["parameters"][1] = {{"name", "activeVoxels"}, {"type", "int"}, {"role", "scalar"}, {"value", 0}};
  expect_error(spec, "seeds/x/y/spec.json: parameters[1].role: 'scalar' does not match", "which is a pointer");
}

TEST_F(MalformedSpec, OutputThroughConstPointer) {
  spec["parameters"][0]["role"] = "out";
  expect_error(spec, "seeds/x/y/spec.json: parameters[0].role: 'out' but kernel.cu parameter 1", "points to const");
}

TEST_F(MalformedSpec, DuplicateParameterName) {
  spec["parameters"][4]["name"] = "imageDimX";
  expect_error(spec, "seeds/x/y/spec.json: parameters[4].name: duplicate parameter name 'imageDimX'");
}

TEST_F(MalformedSpec, CheckedComponentOutOfRange) {
  spec["parameters"][12]["checked_components"] = json::array({0, 4});
  expect_error(spec, "seeds/x/y/spec.json: parameters[12].checked_components[1]: expected an integer in 0..3");
}

// privatise's fixed point needs a float sum's bound: a positive number, on a float output.
TEST_F(MalformedSpec, AccumulationBoundOnlyOnAFloatOutputAndPositive) {
  spec["parameters"][12]["accumulation_bound"] = 0.5;  // float4
  expect_error(spec, "seeds/x/y/spec.json: parameters[12].accumulation_bound: only float out and inout buffers");
  spec["parameters"][12].erase("accumulation_bound");
  spec["parameters"][1]["accumulation_bound"] = 0.5;  // an input
  expect_error(spec, "seeds/x/y/spec.json: parameters[1].accumulation_bound: only float out and inout buffers");
  json joint = json::parse(read(kSeeds / "similarity/nmi_joint_histogram/spec.json"));
  const std::string joint_kernel = read(kSeeds / "similarity/nmi_joint_histogram/kernel.cu");
  EXPECT_EQ(parse_kernel_spec(joint, "s.json", joint_kernel, "kernel.cu").find_parameter("jointHistogram")->accumulation_bound, 0.5);
  for (auto& p : joint["parameters"])
    if (p["name"] == "jointHistogram") p["accumulation_bound"] = -1;
  try {
    parse_kernel_spec(joint, "s.json", joint_kernel, "kernel.cu");
    ADD_FAILURE() << "a negative bound loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("accumulation_bound: expected a positive finite number"), std::string::npos) << e.what();
  }
}

// "constants": __constant__ variables of kernel.cu, of their declared type;
// an array one has a count instead of a value.
TEST_F(MalformedSpec, ConstantsNameScalarConstantVariablesOfTheirType) {
  kernel = "__device__ __constant__ int c_Count;\n__constant__ float c_Table[4];\n__constant__ int3 c_Dim;\n" + kernel;
  spec["constants"] = json::array({{{"name", "c_Count"}, {"type", "int"}, {"value", "activeVoxelNumber"}}});
  const KernelSpec k = parse_kernel_spec(spec, "seeds/x/y/spec.json", kernel, "kernel.cu");
  ASSERT_EQ(k.constants.size(), 1u);
  EXPECT_EQ(k.constants[0].name, "c_Count");
  EXPECT_EQ(k.constants[0].json_path, "constants[0]");

  json bad = spec;
  bad["constants"][0]["name"] = "c_Other";
  expect_error(bad, "seeds/x/y/spec.json: constants[0].name: 'c_Other' is no __constant__ variable of kernel.cu",
               "there: c_Count, c_Table, c_Dim");
  bad = spec;
  bad["constants"][0]["type"] = "unsigned";
  expect_error(bad, "seeds/x/y/spec.json: constants[0].type: 'unsigned' does not match the type 'int' of 'c_Count'");
  bad = spec;
  bad["constants"][0]["name"] = "c_Table";
  bad["constants"][0]["type"] = "float";
  expect_error(bad, "seeds/x/y/spec.json: constants[0].value: 'c_Table' is a __constant__ array (kernel.cu line 2): "
                    "give it a \"count\"");
  // An array constant: a count, its elements drawn from the workloads' inputs.
  json table = spec;
  table["constants"] = json::array({{{"name", "c_Table"}, {"type", "float"}, {"count", 4}}});
  const KernelSpec with_table = parse_kernel_spec(table, "seeds/x/y/spec.json", kernel, "kernel.cu");
  ASSERT_EQ(with_table.constants.size(), 1u);
  EXPECT_TRUE(with_table.constants[0].constant_array);
  EXPECT_EQ(with_table.constants[0].count.text(), "4");
  bad = table;
  bad["constants"][0]["name"] = "c_Count";
  bad["constants"][0]["type"] = "int";
  expect_error(bad, "seeds/x/y/spec.json: constants[0].count: 'c_Count' is a __constant__ scalar");
  bad = spec;
  bad["constants"][0]["type"] = "char";
  expect_error(bad, "seeds/x/y/spec.json: constants[0].type: a constant must be int, unsigned, float, double, bool or "
                    "a vector of them");
  bad = spec;
  bad["constants"][0]["name"] = "activeVoxelNumber";
  expect_error(bad, "seeds/x/y/spec.json: constants[0].name: 'activeVoxelNumber' is already a parameter");
  bad = spec;
  bad["constants"][0].erase("value");
  expect_error(bad, "seeds/x/y/spec.json: constants[0]: give a scalar constant its \"value\", an array constant its "
                    "\"count\" (one of the two)");
  bad = spec;
  bad["constants"] = json::object();
  expect_error(bad, "seeds/x/y/spec.json: constants: expected an array");
}

TEST_F(MalformedSpec, WrittenMustBeKnown) {
  spec["parameters"][12]["written"] = "some";
  expect_error(spec, "seeds/x/y/spec.json: parameters[12].written: expected one of all, active_voxels");
}

TEST_F(MalformedSpec, WrittenIndicesMustNameAnIntInput) {
  spec["parameters"][12]["written"] = "active_voxels";
  spec["parameters"][12]["written_indices"] = "voxelList";
  expect_error(spec, "seeds/x/y/spec.json: parameters[12].written_indices: no parameter named 'voxelList'");
  spec["parameters"][12]["written_indices"] = "controlPointGrid";
  expect_error(spec, "seeds/x/y/spec.json: parameters[12].written_indices: 'controlPointGrid' must be an int");
}

TEST_F(MalformedSpec, UnknownGenerator) {
  spec["workloads"]["validate"][2]["generator"] = "no_such_generator";
  expect_error(spec, "seeds/x/y/spec.json: workloads.validate[2].generator: unknown generator 'no_such_generator'",
               "bspline_brain");
}

TEST_F(MalformedSpec, UnknownGeneratorPassesWhenTheRegistryIsNotChecked) {
  spec["workloads"]["train"]["generator"] = "no_such_generator";
  EXPECT_NO_THROW(parse_kernel_spec(spec, "s.json", kernel, "kernel.cu", SpecCheck{false}));
}

TEST_F(MalformedSpec, TooFewValidationWorkloads) {
  spec["workloads"]["validate"].erase(spec["workloads"]["validate"].begin() + 4,
                                      spec["workloads"]["validate"].end());
  expect_error(spec, "seeds/x/y/spec.json: workloads.validate: expected at least 5 held-out workloads, found 4");
}

TEST_F(MalformedSpec, BadSeed) {
  spec["workloads"]["validate"][0]["seed"] = -3;
  expect_error(spec, "seeds/x/y/spec.json: workloads.validate[0].seed: expected an integer in 0..");
  json train = json::parse(read(kSeeds / "bspline/deformation_field/spec.json"));
  train["workloads"]["train"]["seed"] = 3;  // the training seed is the run's, per generation
  expect_error(train, "seeds/x/y/spec.json: workloads.train.seed: unknown field");
}

TEST_F(MalformedSpec, TrainChecksNeedAPurposeAndTakeNoSeed) {
  json check = spec["workloads"]["validate"][2];
  check.erase("seed");
  spec["workloads"]["train_checks"] = json::array({check});
  expect_error(spec, "seeds/x/y/spec.json: workloads.train_checks[0].purpose: missing required field");
  spec["workloads"]["train_checks"][0]["purpose"] = "borders";
  spec["workloads"]["train_checks"][0]["seed"] = 4;
  expect_error(spec, "seeds/x/y/spec.json: workloads.train_checks[0].seed: unknown field");
  spec["workloads"]["train_checks"] = json::object();
  expect_error(spec, "seeds/x/y/spec.json: workloads.train_checks: expected an array");
}

TEST_F(MalformedSpec, AWorkloadToleranceNeedsItsNote) {
  spec["workloads"]["validate"][1]["tolerance"] = {{"abs", 0}, {"rel", 0}};
  expect_error(spec, "seeds/x/y/spec.json: workloads.validate[1].tolerance_note: missing required field");
  spec["workloads"]["validate"][1]["tolerance"] = {{"abs", -1}, {"rel", 0}};
  spec["workloads"]["validate"][1]["tolerance_note"] = "why";
  expect_error(spec, "seeds/x/y/spec.json: workloads.validate[1].tolerance.abs: expected a number >= 0");
  spec["workloads"]["validate"][1].erase("tolerance");
  expect_error(spec, "seeds/x/y/spec.json: workloads.validate[1].tolerance_note: only with a \"tolerance\"");
}

TEST_F(MalformedSpec, TrainingSetNamesAndTolerances) {
  json check = spec["workloads"]["validate"][2];
  check.erase("seed");
  check["purpose"] = "a full mask: every border voxel is active";
  check["tolerance"] = {{"abs", 0}, {"rel", 0}};
  check["tolerance_note"] = "exact";
  spec["workloads"]["train_checks"] = json::array({check, check});
  const KernelSpec k = parse_kernel_spec(spec, "seeds/x/y/spec.json", kernel, "kernel.cu");
  EXPECT_EQ(k.training_workloads(), (std::vector<std::string>{"train", "train:1", "train:2"}));
  EXPECT_EQ(&k.workload("train:0"), &k.train);
  EXPECT_EQ(&k.workload("train:2"), &k.train_checks[1]);
  EXPECT_EQ(k.train_checks[0].purpose, "a full mask: every border voxel is active");
  EXPECT_EQ(k.tolerance_of(k.train).abs, k.tolerance.abs);
  EXPECT_EQ(k.tolerance_of(k.train_checks[0]).rel, 0.0);
  EXPECT_THROW(k.workload("train:3"), std::runtime_error);
}

TEST_F(MalformedSpec, CoverageExemptionsAreRead) {
  spec["coverage_exempt"] = json::array({{{"branch", "if@52:5"}, {"direction", "false"}, {"reason", "no padding"}},
                                         {{"branch", "?:@7:12"}, {"direction", "true"}, {"reason", "r"}},
                                         {{"branch", "op@60:1"}, {"direction", "false"}, {"reason", "r"}}});
  const KernelSpec k = parse_kernel_spec(spec, "seeds/x/y/spec.json", kernel, "kernel.cu");
  ASSERT_EQ(k.coverage_exempt.size(), 3u);
  EXPECT_EQ(k.coverage_exempt[0].branch, "if@52:5");
  EXPECT_FALSE(k.coverage_exempt[0].direction);
  EXPECT_EQ(k.coverage_exempt[0].reason, "no padding");
  EXPECT_EQ(k.coverage_exempt[0].json_path, "coverage_exempt[0]");
  EXPECT_TRUE(k.coverage_exempt[1].direction);
  // Optional: the seed's own spec may have none.
  spec.erase("coverage_exempt");
  EXPECT_TRUE(parse_kernel_spec(spec, "seeds/x/y/spec.json", kernel, "kernel.cu").coverage_exempt.empty());
}

TEST_F(MalformedSpec, CoverageExemptionsAreValidated) {
  const json good = {{"branch", "if@52:5"}, {"direction", "false"}, {"reason", "why"}};
  auto with = [&](const json& entry) {
    json j = spec;
    j["coverage_exempt"] = json::array({good, entry});
    return j;
  };
  json entry = good;
  entry["branch"] = "while@52:5";
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].branch: 'while@52:5' is not a branch key",
               "kind if, op or ?:");
  for (const char* bad : {"if@52", "if@0:5", "if@52:-1", "if52:5", "if@52:5x", "if@:5", "op@1:2:3"}) {
    entry["branch"] = bad;
    expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].branch: '" + std::string(bad) + "' is not");
  }
  entry = good;
  entry["direction"] = "both";
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].direction: expected \"true\" or \"false\"",
               "'both'");
  entry["direction"] = false;
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].direction: expected a string");
  entry = good;
  entry["reason"] = "";
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].reason: expected a non-empty string");
  entry["reason"] = "  \n";
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].reason: expected a reason");
  entry.erase("reason");
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].reason: missing required field");
  entry = good;
  entry["note"] = "x";
  expect_error(with(entry), "seeds/x/y/spec.json: coverage_exempt[1].note: unknown field");
  expect_error(with(good), "seeds/x/y/spec.json: coverage_exempt[1]: if@52:5 false is exempted twice");
  spec["coverage_exempt"] = json::object();
  expect_error(spec, "seeds/x/y/spec.json: coverage_exempt: expected an array");
  spec["coverage_exempt"] = json::array({"if@52:5"});
  expect_error(spec, "seeds/x/y/spec.json: coverage_exempt[0]: expected an object");
}

TEST_F(MalformedSpec, DebugOptionIsNoTunable) {
  spec["tunables"]["options"].push_back(json::array({"-G"}));
  expect_error(spec, "seeds/x/y/spec.json: tunables.options[5][0]: '-G' is not a performance option");
}

TEST_F(MalformedSpec, BlockSizesMustBeWholeWarps) {
  spec["tunables"]["block_sizes"][1] = 100;
  expect_error(spec, "seeds/x/y/spec.json: tunables.block_sizes[1]: expected a multiple of 32");
  spec["tunables"]["block_sizes"][1] = 2048;
  expect_error(spec, "seeds/x/y/spec.json: tunables.block_sizes[1]: expected an integer in 32..1024");
}

TEST_F(MalformedSpec, LaunchNeedsThreeDimensions) {
  spec["launch"]["grid"] = json::array({"ceil_div(activeVoxelNumber, B)", 1});
  expect_error(spec, "seeds/x/y/spec.json: launch.grid: expected an array of 3 expressions, found an array of 2");
}

TEST_F(MalformedSpec, NegativeTolerance) {
  spec["tolerance"]["rel"] = -1e-6;
  expect_error(spec, "seeds/x/y/spec.json: tolerance.rel: expected a number >= 0");
}

TEST_F(MalformedSpec, MissingToleranceNote) {
  spec.erase("tolerance_note");
  expect_error(spec, "seeds/x/y/spec.json: tolerance_note: missing required field");
}

TEST_F(MalformedSpec, TypoedFieldIsAnErrorButUnderscoreFieldsAreComments) {
  spec["parameters"][0]["cuont"] = "1";
  expect_error(spec, "seeds/x/y/spec.json: parameters[0].cuont: unknown field");
  spec["parameters"][0].erase("cuont");
  spec["_why"] = "a comment";
  EXPECT_NO_THROW(parse_kernel_spec(spec, "s.json", kernel, "kernel.cu"));
}

TEST_F(MalformedSpec, NotAnObject) {
  expect_error(json::array(), "seeds/x/y/spec.json: expected an object, found an array");
}

// Spec files on disk: a temporary seed folder.
class SpecFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gi-spec-" + std::to_string(std::random_device{}()));
    dir_ = root_ / "bspline" / "deformation_field";
    fs::create_directories(dir_);
    fs::copy_file(kSeeds / "bspline/deformation_field/kernel.cu", dir_ / "kernel.cu");
    fs::copy_file(kSeeds / "bspline/deformation_field/spec.json", dir_ / "spec.json");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write_spec(const std::string& text) { std::ofstream(dir_ / "spec.json", std::ios::trunc) << text; }
  std::string error() const {
    try {
      load_kernel_spec(dir_);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "loaded without error";
    return "";
  }
  fs::path root_, dir_;
};

TEST_F(SpecFolder, LoadsFromFolderOrFile) {
  EXPECT_EQ(load_kernel_spec(dir_).entry, "bspline_deformation_field");
  EXPECT_EQ(load_kernel_spec(dir_ / "spec.json").dir, dir_);
}

TEST_F(SpecFolder, MalformedJsonNamesTheFile) {
  write_spec("{\"entry\": ");
  const std::string m = error();
  EXPECT_NE(m.find("spec.json: malformed JSON"), std::string::npos) << m;
}

TEST_F(SpecFolder, FamilyMustMatchTheFolder) {
  fs::rename(root_ / "bspline", root_ / "warping");
  dir_ = root_ / "warping" / "deformation_field";
  const std::string m = error();
  EXPECT_NE(m.find("spec.json: family: 'bspline' does not match the seed's family folder 'warping'"),
            std::string::npos)
      << m;
}

TEST_F(SpecFolder, MissingKernel) {
  fs::remove(dir_ / "kernel.cu");
  EXPECT_NE(error().find("spec.json: entry: no kernel.cu beside the spec"), std::string::npos);
}

TEST_F(SpecFolder, MissingSpec) {
  fs::remove(dir_ / "spec.json");
  EXPECT_NE(error().find("spec.json: no such file"), std::string::npos);
}

// Launch plans from a small generated workload.
TEST(WorkloadPlan, BsplinePlanFollowsTheSpec) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "bspline/deformation_field");
  WorkloadSpec small = spec.train;
  small.variables = {{"dim", {23, 19, 17}}, {"spacing", 5}, {"mask", "full"}};
  const Workload w = generate_workload(spec, small, 7);
  const LaunchPlan plan = build_launch_plan(spec, w, 64);
  EXPECT_EQ(plan.entry, "bspline_deformation_field");
  ASSERT_EQ(plan.params.size(), spec.parameters.size());
  ASSERT_EQ(plan.buffers.size(), 3u);
  ASSERT_EQ(plan.scalars.size(), 10u);
  const std::size_t active = 23 * 19 * 17;
  EXPECT_EQ(w.variables.at("activeVoxelNumber"), active);
  // Order: buffer 0, buffer 1, then scalars, then the output buffer.
  EXPECT_EQ(plan.params[0], (std::pair<bool, std::size_t>{true, 0}));
  EXPECT_EQ(plan.params[2], (std::pair<bool, std::size_t>{false, 0}));
  EXPECT_EQ(plan.params[12], (std::pair<bool, std::size_t>{true, 2}));
  EXPECT_EQ(plan.buffers[0].name, "controlPointGrid");
  // floor((23-1)/5)+4 = 8, floor(18/5)+4 = 7, floor(16/5)+4 = 7
  EXPECT_EQ(plan.buffers[0].count, 8u * 7u * 7u);
  EXPECT_EQ(plan.buffers[0].initial.size(), 8u * 7u * 7u * 16u);
  EXPECT_EQ(plan.buffers[2].name, "deformationField");
  EXPECT_EQ(plan.buffers[2].role, ParamRole::Out);
  EXPECT_EQ(plan.buffers[2].count, active);
  EXPECT_TRUE(plan.buffers[2].initial.empty());
  std::int32_t n;
  std::memcpy(&n, plan.scalars[0].bytes.data(), 4);
  EXPECT_EQ(plan.scalars[0].name, "activeVoxelNumber");
  EXPECT_EQ(static_cast<std::size_t>(n), active);
  float spacing;
  ASSERT_EQ(plan.scalars[7].bytes.size(), 4u);
  std::memcpy(&spacing, plan.scalars[7].bytes.data(), 4);
  EXPECT_EQ(spacing, 5.0f);
  EXPECT_EQ(plan.block, (std::array<unsigned, 3>{64, 1, 1}));
  EXPECT_EQ(plan.grid, (std::array<unsigned, 3>{static_cast<unsigned>((active + 63) / 64), 1, 1}));
  EXPECT_EQ(plan.min_bytes_moved, 16.0 * 8 * 7 * 7 + 20.0 * active);

  LaunchPlan other = plan;
  set_launch_geometry(other, spec, w.variables, 1024);
  EXPECT_EQ(other.block[0], 1024u);
  EXPECT_EQ(other.grid[0], static_cast<unsigned>((active + 1023) / 1024));
  set_launch_geometry(other, spec, w.variables, 0);  // the spec's default
  EXPECT_EQ(other.block[0], spec.default_block_size);
}

TEST(WorkloadPlan, WrongInputSizeNamesTheParameter) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "bspline/deformation_field");
  WorkloadSpec small = spec.train;
  small.variables = {{"dim", 12}, {"mask", "full"}};
  Workload w = generate_workload(spec, small, 1);
  w.inputs["activeVoxels"].resize(8);
  try {
    build_launch_plan(spec, w, 128);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("spec.json: parameters[1]: the generator gave 8 bytes for 'activeVoxels', "
                                         "expected 6912"),
              std::string::npos)
        << e.what();
  }
  w.inputs.erase("activeVoxels");
  EXPECT_THROW(build_launch_plan(spec, w, 128), std::runtime_error);
  w.variables.erase("imageDimX");
  try {
    build_launch_plan(spec, w, 128);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("parameters[1]: the generator gave no input bytes"), std::string::npos)
        << e.what();
  }
}

TEST(WorkloadPlan, UnknownVariableInACountNamesTheField) {
  json j = json::parse(read(kSeeds / "bspline/deformation_field/spec.json"));
  j["parameters"][1]["count"] = "activeVoxelCount";
  const KernelSpec spec = parse_kernel_spec(j, "seeds/x/y/spec.json", read(kSeeds / "bspline/deformation_field/kernel.cu"),
                                            "kernel.cu");
  WorkloadSpec small = spec.train;
  small.variables = {{"dim", 12}};
  const Workload w = generate_workload(spec, small, 1);
  try {
    build_launch_plan(spec, w, 128);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("seeds/x/y/spec.json: parameters[1].count: expression 'activeVoxelCount' "
                                         "at position 1: unknown variable 'activeVoxelCount'"),
              std::string::npos)
        << e.what();
  }
}

TEST(WorkloadPlan, GeneratorErrorsNameTheWorkloadAndVariable) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "bspline/deformation_field");
  WorkloadSpec bad = spec.validate[0];
  bad.variables["dimm"] = 3;
  try {
    generate_workload(spec, bad, 0);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("spec.json: workloads.validate[0].variables: generator 'bspline_brain': "
                                         "variables.dimm: unknown variable"),
              std::string::npos)
        << e.what();
  }
  bad = spec.train;
  bad.variables["spacing"] = 0;
  EXPECT_THROW(generate_workload(spec, bad, 0), std::runtime_error);
  bad.variables["spacing"] = json::array({5, 5});
  EXPECT_THROW(generate_workload(spec, bad, 0), std::runtime_error);
  bad = spec.train;
  bad.variables["mask"] = "torus";
  EXPECT_THROW(generate_workload(spec, bad, 0), std::runtime_error);
}

TEST(WorkloadPlan, TrilinearExpectedOutputsListTheActiveVoxels) {
  const KernelSpec spec = load_kernel_spec(kSeeds / "resampling/trilinear");
  WorkloadSpec small = spec.train;
  small.variables = {{"dim", {31, 29, 27}}, {"mask", "brain"}};
  const Workload w = generate_workload(spec, small, 3);
  const ReferenceOutputs ref = find_reference(spec.entry)(w);
  const std::vector<ExpectedOutput> expected = expected_outputs(spec, w, ref);
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(expected[0].buffer, "warpedImage");
  ASSERT_TRUE(expected[0].written_elements.has_value());
  const auto& written = *expected[0].written_elements;
  EXPECT_EQ(written.size(), static_cast<std::size_t>(w.variables.at("activeVoxelNumber")));
  EXPECT_GT(written.size(), 0u);
  EXPECT_LT(written.size(), 31u * 29u * 27u);
  EXPECT_EQ(expected[0].values.size(), 31u * 29u * 27u);
  std::size_t finite = 0;
  for (double v : expected[0].values) finite += std::isfinite(v) ? 1 : 0;
  EXPECT_EQ(finite, written.size());  // unwritten elements are NaN
  for (std::uint32_t i : written) EXPECT_TRUE(std::isfinite(expected[0].values[i]));
  const LaunchPlan plan = build_launch_plan(spec, w, 128);
  EXPECT_EQ(checked_values(plan, expected), written.size());

  ReferenceOutputs short_ref = ref;
  short_ref["warpedImage"].pop_back();
  EXPECT_THROW(expected_outputs(spec, w, short_ref), std::runtime_error);
  ReferenceOutputs stray = ref;
  stray["floatingImage"] = {};
  EXPECT_THROW(expected_outputs(spec, w, stray), std::runtime_error);
}

}  // namespace

namespace {

const char* kTextureKernel = R"(
extern "C" __global__ void texture_scale(cudaTextureObject_t x, float* y, int n, bool twice) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = tex1Dfetch<float4>(x, i);
    y[i] = twice ? 2.0f * v.x : v.x;
  }
}
)";

json texture_spec() {
  return json::parse(R"JSON({
    "entry": "texture_scale", "family": "user", "work_item": "one i < n", "reference": "seed",
    "parameters": [
      {"name": "x", "type": "float4", "role": "in", "count": "n", "texture": true},
      {"name": "y", "type": "float", "role": "out", "count": "n"},
      {"name": "n", "type": "int", "role": "scalar", "value": "n"},
      {"name": "twice", "type": "bool", "role": "scalar", "value": "twice"}],
    "launch": {"block": ["B", 1, 1], "grid": ["ceil_div(n, B)", 1, 1]},
    "tolerance": {"abs": 0, "rel": 0}, "tolerance_note": "exact",
    "min_bytes": "20 * n",
    "tunables": {"block_sizes": [128], "options": [[]]},
    "workloads": {
      "train": {"generator": "random", "variables": {"n": 1000, "twice": 1, "inputs": {"x": {"uniform": [-1, 1]}}}},
      "validate": [
        {"generator": "random", "variables": {"n": 10, "twice": 0, "inputs": {"x": {"uniform": [-1, 1]}}}},
        {"generator": "random", "variables": {"n": 11, "twice": 0, "inputs": {"x": {"uniform": [-1, 1]}}}},
        {"generator": "random", "variables": {"n": 12, "twice": 0, "inputs": {"x": {"uniform": [-1, 1]}}}},
        {"generator": "random", "variables": {"n": 13, "twice": 0, "inputs": {"x": {"uniform": [-1, 1]}}}},
        {"generator": "random", "variables": {"n": 14, "twice": 2, "inputs": {"x": {"uniform": [-1, 1]}}}}]}
  })JSON");
}

std::string spec_error(const json& j) {
  try {
    parse_kernel_spec(j, "s.json", kTextureKernel, "kernel.cu");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

// A cudaTextureObject_t parameter is an in buffer with "texture": true of
// the type its tex1Dfetch reads; a bool is a scalar of one byte, 0 or 1.
TEST(KernelSpec, ATextureObjectIsAnInBufferAndABoolAScalarByte) {
  const KernelSpec k = parse_kernel_spec(texture_spec(), "s.json", kTextureKernel, "kernel.cu");
  ASSERT_EQ(k.parameters.size(), 4u);
  EXPECT_TRUE(k.parameters[0].texture);
  EXPECT_FALSE(k.parameters[1].texture);
  EXPECT_EQ(k.parameters[3].type, ElementType::Bool);

  const Workload w = generate_workload(k, k.train, 1);
  const LaunchPlan plan = build_launch_plan(k, w, 128);
  ASSERT_EQ(plan.buffers.size(), 2u);
  EXPECT_TRUE(plan.buffers[0].texture);
  EXPECT_FALSE(plan.buffers[1].texture);
  ASSERT_EQ(plan.scalars.size(), 2u);
  ASSERT_EQ(plan.scalars[1].bytes.size(), 1u);
  EXPECT_EQ(plan.scalars[1].bytes[0], std::byte{1});
  // validate[4] sets twice to 2, which is no bool.
  const Workload two = generate_workload(k, k.validate[4], 1);
  try {
    build_launch_plan(k, two, 128);
    ADD_FAILURE() << "twice = 2 gave a plan";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("parameters[3].value: 'twice' gave 2: expected a bool (0 or 1)"),
              std::string::npos) << e.what();
  }

  json j = texture_spec();
  j["parameters"][0].erase("texture");
  EXPECT_NE(spec_error(j).find("parameters[0]: kernel.cu parameter 1 of texture_scale is a cudaTextureObject_t: an in "
                               "buffer with \"texture\": true"), std::string::npos) << spec_error(j);
  j = texture_spec();
  j["parameters"][1]["texture"] = true;
  EXPECT_NE(spec_error(j).find("parameters[1].texture: only in buffers are read through a texture"), std::string::npos)
      << spec_error(j);
  j = texture_spec();
  j["parameters"][0]["type"] = "double";
  EXPECT_NE(spec_error(j).find("parameters[0].texture: a texture of double"), std::string::npos) << spec_error(j);
  j = texture_spec();
  j["parameters"][0]["texture"] = "yes";
  EXPECT_NE(spec_error(j).find("parameters[0].texture: expected true, false or an array texture's object"), std::string::npos) << spec_error(j);
  j = texture_spec();
  j["parameters"][2] = {{"name", "n"}, {"type", "int"}, {"role", "scalar"}, {"value", "n"}, {"texture", true}};
  EXPECT_NE(spec_error(j).find("parameters[2].texture: only in buffers"), std::string::npos) << spec_error(j);
  j = texture_spec();
  j["parameters"][1]["type"] = "bool";
  EXPECT_NE(spec_error(j).find("parameters[1].type: a buffer of bool"), std::string::npos) << spec_error(j);
}
