// Buffers of structs (grammar/record_type.hpp): a particle array
// `Particle* p` with `struct Particle { float3 pos; float3 vel; float mass; }`
// is drafted by gi init as records of 7 floats, loaded from its "layout",
// drawn, passed and checked as 7 floats a record; structs gi cannot read so
// are refused with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/random_workload.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "grammar/record_type.hpp"

namespace gi {
namespace {

using json = nlohmann::json;

grammar::RecordType record(const std::string& source, const std::string& name) {
  std::string why;
  const auto r = grammar::find_record_type(source, "k.cu", name, why);
  if (!r) throw std::runtime_error(why);
  return *r;
}

std::string refusal(const std::string& source, const std::string& name) {
  std::string why;
  const auto r = grammar::find_record_type(source, "k.cu", name, why);
  return r ? r->words.refusal : why;
}

TEST(RecordType, StructsOfOneComponentTypeAreRecords) {
  const grammar::RecordType p =
      record("struct Particle {\n  float3 pos;\n  float3 vel;\n  float mass;\n};\n", "Particle");
  EXPECT_EQ(p.layout, (std::vector<std::string>{"float3", "float3", "float"}));
  EXPECT_EQ(p.words.word, "float");
  EXPECT_EQ(p.words.words, 7);
  EXPECT_EQ(p.words.bytes, 28u);
  EXPECT_EQ(p.line, 1);
  // NiftyReg's matrices: a typedef of an unnamed struct, a 2-D array member.
  const grammar::RecordType m = record("typedef struct { float m[3][3]; } mat33;", "mat33");
  EXPECT_EQ(m.layout, (std::vector<std::string>{"float[9]"}));
  EXPECT_EQ(m.words.words, 9);
  // Comma-separated members, a member function and a static member, and a
  // nested struct, whose members it takes.
  const std::string nested =
      "struct LatLong { float lat, lng; __device__ float sum() const { return lat + lng; } static const int k = 2; };\n"
      "typedef struct Pair_ { LatLong a; float w[2]; } Pair;\n";
  const grammar::RecordType pair = record(nested, "Pair");
  EXPECT_EQ(pair.layout, (std::vector<std::string>{"float", "float", "float[2]"}));
  EXPECT_EQ(pair.words.words, 4);
  // `typedef struct T N;` names T's definition.
  EXPECT_EQ(record("struct cell { int id; unsigned int n; };", "cell").words.refusal,
            "the record mixes component types (int, unsigned); gi generates records of one");
  EXPECT_EQ(record("struct node { int a; int b; };\ntypedef struct node Node;", "Node").words.words, 2);
  EXPECT_EQ(record("struct d2 { double x; double y; };", "d2").words.word, "double");
}

// A member whose type the project names once (`typedef float real;`,
// lavaMD's `#define fp double` in main.h) is of the type it names.
TEST(RecordBuffer, AMembersTypeAliasIsTheTypeItNames) {
  const std::string source =
      "typedef float real;\n"
      "struct Point { real x, y, z; };\n"
      "__global__ void shift(Point* p, real dx, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) p[i].x += dx;\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000", "dx=0.5"}, {}));
  EXPECT_EQ(s.spec["parameters"][0]["layout"], json::parse(R"(["float", "float", "float"])"));
  EXPECT_EQ(s.spec["parameters"][0]["count"], "n");
  std::string why;
  EXPECT_FALSE(grammar::find_record_type(grammar::tokenize(source, "k.cu"), "Point", why)) << "no aliases given";
  EXPECT_NE(why.find("a member of type 'real'"), std::string::npos) << why;
}

TEST(RecordType, WhatGiCannotGenerateIsRefusedWithTheReason) {
  EXPECT_NE(refusal("struct A { float x; float4 v; };", "A").find("'float4' starts 12 bytes of padding"),
            std::string::npos);
  EXPECT_NE(refusal("struct A { float4 v; float x; };", "A").find("ends in 12 bytes of padding"), std::string::npos);
  EXPECT_NE(refusal("struct A { int x; float y; };", "A").find("mixes component types (float, int)"),
            std::string::npos);
  EXPECT_NE(refusal("struct A { int x : 4; int y; };", "A").find("'x' is a bit field"), std::string::npos);
  EXPECT_NE(refusal("struct A { bool b; };", "A").find("a member of type 'bool', which gi does not generate"),
            std::string::npos);
  EXPECT_NE(refusal("struct __align__(16) A { float x; };", "A").find("no struct 'A'"), std::string::npos);
  EXPECT_NE(refusal("struct A { float v[N]; };", "A").find("length that is no number"), std::string::npos);
  EXPECT_NE(refusal("float x;", "A").find("the file defines no struct 'A'"), std::string::npos);
  EXPECT_NE(grammar::record_words({"float", "char"}).refusal.find("'char' is no member type gi generates"),
            std::string::npos);
}

const std::string kParticles =
    "struct Particle {\n"
    "  float3 pos;\n"
    "  float3 vel;\n"
    "  float mass;\n"
    "};\n"
    "__global__ void step(Particle* p, int n, float dt) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    Particle q = p[i];\n"
    "    q.vel.y -= 9.81f * dt;\n"
    "    q.pos.x += q.vel.x * dt;\n"
    "    q.pos.y += q.vel.y * dt;\n"
    "    q.pos.z += q.vel.z * dt;\n"
    "    p[i] = q;\n"
    "  }\n"
    "}\n";

TEST(RecordBuffer, GiInitDraftsAnArrayOfStructsAsRecords) {
  const SpecScaffold s =
      scaffold_spec(kParticles, "k.cu", std::nullopt, "user", parse_init_sizes({"n=100003", "dt=0.01"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  const json& p = spec["parameters"][0];
  EXPECT_EQ(p["type"], "Particle");
  EXPECT_EQ(p["layout"], json::array({"float3", "float3", "float"}));
  EXPECT_EQ(p["role"], "inout");
  EXPECT_EQ(p["count"], "n");
  EXPECT_EQ(spec["min_bytes"], "56 * n");  // 28 bytes a record, read and written
  bool said = false;
  for (const std::string& line : s.inferred)
    said = said || line.find("type of 'p': records of struct Particle (line 1: float3, float3, float), 7 floats each") !=
                       std::string::npos;
  EXPECT_TRUE(said);

  // Loaded: 7 floats a record, drawn and passed as such.
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", kParticles, "k.cu", {.registry = false});
  const fitness::ParamSpec& ps = k.parameters[0];
  EXPECT_EQ(ps.type, fitness::ElementType::F32);
  EXPECT_EQ(ps.record_components, 7u);
  const fitness::Workload w = fitness::generate_workload(k, k.train, 1);
  EXPECT_EQ(w.inputs.at("p").size(), 100003u * 28);
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, w, 256);
  EXPECT_EQ(plan.buffers[0].count, 100003u * 7);
}

TEST(RecordBuffer, ASpecsLayoutIsCheckedWhereItIsRead) {
  const SpecScaffold s = scaffold_spec(kParticles, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000", "dt=0.01"}, {}));
  const json good = json::parse(s.spec.dump());
  const auto error = [&](const std::function<void(json&)>& change) {
    json spec = good;
    change(spec);
    try {
      fitness::parse_kernel_spec(spec, "spec.json", kParticles, "k.cu", {.registry = false});
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error([](json& j) { j["parameters"][0]["layout"] = json::array({"float", "float4"}); })
                .find("spec.json: parameters[0].layout: 'float4' starts 12 bytes of padding"),
            std::string::npos);
  EXPECT_NE(error([](json& j) { j["parameters"][0]["layout"] = "float[7]"; }).find("parameters[0].layout: expected a non-empty array"),
            std::string::npos);
  EXPECT_NE(error([](json& j) { j["parameters"][0].erase("layout"); }).find("or a struct's name with its \"layout\""),
            std::string::npos);
  EXPECT_NE(error([](json& j) { j["parameters"][0]["checked_components"] = json::array({0}); })
                .find("a buffer of records (\"layout\") takes no checked_components"),
            std::string::npos);
  // The layout's type must be the kernel's.
  EXPECT_NE(error([](json& j) { j["parameters"][0]["type"] = "Body"; }).find("parameters[0]"), std::string::npos);
}

class RecordBufferEmulated : public ::testing::Test {
 protected:
  void SetUp() override {
    if (fitness::emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  }
};

// The drafted spec's plan runs the kernel on the CPU emulator: the bytes
// it passes are the struct's, so each record moves as the kernel says.
TEST_F(RecordBufferEmulated, TheRecordsBytesAreTheStructsBytes) {
  const SpecScaffold s = scaffold_spec(kParticles, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1001", "dt=0.5"}, {}));
  const fitness::KernelSpec k =
      fitness::parse_kernel_spec(json::parse(s.spec.dump()), "spec.json", kParticles, "k.cu", {.registry = false});
  const fitness::Workload w = fitness::generate_workload(k, k.train_checks.at(0), 1);
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, w, 128);
  fitness::EmulatorOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
  const fitness::CpuEmulator emulator(o);
  const fitness::EmulatedKernel kernel = emulator.load(kParticles, "step", "k.cu");
  ASSERT_TRUE(kernel.ok()) << kernel.error;
  const fitness::EmulatedRun run = emulator.run(kernel, plan);
  ASSERT_EQ(run.status, fitness::RunStatus::Ok) << run.message;
  const std::vector<std::byte>& before = w.inputs.at("p");
  ASSERT_EQ(run.buffers.size(), 1u);
  const std::vector<std::byte>& after = run.buffers[0];
  ASSERT_EQ(after.size(), before.size());
  const std::size_t n = before.size() / 28;
  for (std::size_t i = 0; i < n; ++i) {
    float b[7], a[7];
    std::memcpy(b, before.data() + 28 * i, 28);
    std::memcpy(a, after.data() + 28 * i, 28);
    const float vy = b[4] - 9.81f * 0.5f;
    ASSERT_FLOAT_EQ(a[4], vy) << i;
    ASSERT_FLOAT_EQ(a[0], b[0] + b[3] * 0.5f) << i;
    ASSERT_FLOAT_EQ(a[1], b[1] + vy * 0.5f) << i;
    ASSERT_FLOAT_EQ(a[6], b[6]) << i;  // the mass: untouched
  }
}

// A kernel that writes no buffer (NiftyReg's matrix printers) leaves gi
// nothing to check: gi init leaves the roles to the user, and a spec
// naming no output is an error.
TEST(NoOutput, AKernelThatOnlyPrintsLeavesItsRolesToTheUser) {
  const std::string printer =
      "__global__ void show(float* mat, unsigned n) {\n"
      "  for (unsigned i = 0; i < n; ++i) printf(\"%f \", mat[i]);\n"
      "}\n";
  const SpecScaffold p = scaffold_spec(printer, "k.cu", std::nullopt, "user", parse_init_sizes({"n=16"}, {}));
  const json draft = json::parse(p.spec.dump());
  ASSERT_TRUE(draft["parameters"][0]["role"].is_string());
  EXPECT_NE(draft["parameters"][0]["role"].get<std::string>().find(
                "FILL: in, out or inout: gi sees no store through any parameter of 'show'"),
            std::string::npos)
      << draft["parameters"][0]["role"];
  // With only a const pointer nothing can be an output: the work item too is the user's.
  std::string constant = printer;
  constant.replace(constant.find("float* mat"), 10, "const float* mat");
  const json c = json::parse(scaffold_spec(constant, "k.cu", std::nullopt, "user", parse_init_sizes({"n=16"}, {})).spec.dump());
  EXPECT_EQ(c["parameters"][0]["role"], "in");
  EXPECT_NE(c["work_item"].get<std::string>().find("FILL: what the kernel computes: it writes no buffer"),
            std::string::npos);
  const SpecScaffold s = scaffold_spec(kParticles, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000", "dt=0.01"}, {}));
  json spec = json::parse(s.spec.dump());
  spec["parameters"][0]["role"] = "in";
  try {
    fitness::parse_kernel_spec(spec, "spec.json", kParticles, "k.cu", {.registry = false});
    ADD_FAILURE() << "a spec with no output loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("spec.json: parameters: no out or inout buffer"), std::string::npos) << e.what();
  }
}

// Rodinia's nearest neighbour: a record read through `p->m` of an alias
// `LatLong* q = d + i`, and the output stored through `*dist` of another;
// its `#include <cuda.h>` is the emulator's own.
const std::string kNearest =
    "#include <cuda.h>\n"
    "typedef struct latLong { float lat; float lng; } LatLong;\n"
    "__global__ void euclid(LatLong* d_locations, float* d_distances, int numRecords, float lat, float lng) {\n"
    "  int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;\n"
    "  LatLong* latLong = d_locations + globalId;\n"
    "  if (globalId < numRecords) {\n"
    "    float* dist = d_distances + globalId;\n"
    "    *dist = sqrtf((lat - latLong->lat) * (lat - latLong->lat) + (lng - latLong->lng) * (lng - latLong->lng));\n"
    "  }\n"
    "}\n";

TEST(RecordBuffer, AMemberThroughAnAliasAndAStoreThroughAnother) {
  const SpecScaffold s = scaffold_spec(kNearest, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"numRecords=100000", "lat=0.5", "lng=0.25"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["parameters"][0]["type"], "LatLong");
  EXPECT_EQ(spec["parameters"][0]["layout"], json::array({"float", "float"}));
  EXPECT_EQ(spec["parameters"][0]["role"], "in");
  EXPECT_EQ(spec["parameters"][0]["count"], "numRecords");
  EXPECT_EQ(spec["parameters"][1]["role"], "out");  // *dist = ...: a plain store from element 0 on
  EXPECT_EQ(spec["parameters"][1]["count"], "numRecords");
  EXPECT_EQ(spec["min_bytes"], "12 * numRecords");
}

TEST_F(RecordBufferEmulated, TheToolkitsRuntimeHeaderIsTheEmulatorsOwn) {
  fitness::EmulatorOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
  const fitness::CpuEmulator emulator(o);
  const fitness::EmulatedKernel kernel = emulator.load(kNearest, "euclid", "k.cu");
  EXPECT_TRUE(kernel.ok()) << kernel.error;
}

// A struct passed by value: its members may mix types and leave padding, as
// C lays them out; an int member the guard names (`p.n`) is a size, p_n.
const std::string kScaleParams =
    "struct ScaleParams {\n"
    "  int n;\n"
    "  double bias;\n"
    "  float gain[2];\n"
    "};\n"
    "__global__ void scale(const float* x, float* y, ScaleParams p) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < p.n) y[i] = p.gain[i % 2] * x[i] + (float)p.bias;\n"
    "}\n";

TEST(RecordByValue, AStructsMembersAreItsValuesAndAnIntMemberIsASize) {
  const grammar::RecordFields f = grammar::record_fields({"int", "double", "float[2]"});
  ASSERT_EQ(f.components.size(), 4u);
  EXPECT_EQ(f.components[1], (std::pair<std::string, std::size_t>{"double", 8}));  // after 4 bytes of padding
  EXPECT_EQ(f.components[3], (std::pair<std::string, std::size_t>{"float", 20}));
  EXPECT_EQ(f.bytes, 24u);
  const SpecScaffold s = scaffold_spec(kScaleParams, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"p_n=100000", "p_bias=0.5", "p_gain_0=2", "p_gain_1=-1"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  const json& p = spec["parameters"][2];
  EXPECT_EQ(p["type"], "ScaleParams");
  EXPECT_EQ(p["layout"], json::array({"int", "double", "float[2]"}));
  EXPECT_EQ(p["value"], json::array({"p_n", "p_bias", "p_gain_0", "p_gain_1"}));
  EXPECT_EQ(spec["parameters"][0]["count"], "p_n");
  EXPECT_EQ(spec["launch"]["grid"][0], "ceil_div(p_n, B)");
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", kScaleParams, "k.cu", {.registry = false});
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 256);
  ASSERT_EQ(plan.scalars.size(), 1u);
  const std::vector<std::byte>& b = plan.scalars[0].bytes;
  ASSERT_EQ(b.size(), 24u);
  int n = 0;
  double bias = 0;
  float gain[2] = {0, 0};
  std::memcpy(&n, b.data(), 4);
  std::memcpy(&bias, b.data() + 8, 8);
  std::memcpy(gain, b.data() + 16, 8);
  EXPECT_EQ(n, 100000);
  EXPECT_EQ(bias, 0.5);
  EXPECT_EQ(gain[0], 2.f);
  EXPECT_EQ(gain[1], -1.f);
  // One expression per component, or an error naming the path.
  json wrong = spec;
  wrong["parameters"][2]["value"] = json::array({"p_n"});
  try {
    fitness::parse_kernel_spec(wrong, "spec.json", kScaleParams, "k.cu", {.registry = false});
    ADD_FAILURE() << "a struct given one value of four loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("parameters[2].value: struct ScaleParams takes an array of 4 expressions"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(RecordBufferEmulated, AStructByValueReachesTheKernelAsItsBytes) {
  const SpecScaffold s = scaffold_spec(kScaleParams, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"p_n=1001", "p_bias=0.5", "p_gain_0=2", "p_gain_1=-1"}, {}));
  const fitness::KernelSpec k =
      fitness::parse_kernel_spec(json::parse(s.spec.dump()), "spec.json", kScaleParams, "k.cu", {.registry = false});
  const fitness::Workload w = fitness::generate_workload(k, k.train, 1);
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, w, 128);
  fitness::EmulatorOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
  const fitness::CpuEmulator emulator(o);
  const fitness::EmulatedKernel kernel = emulator.load(kScaleParams, "scale", "k.cu");
  ASSERT_TRUE(kernel.ok()) << kernel.error;
  const fitness::EmulatedRun run = emulator.run(kernel, plan);
  ASSERT_EQ(run.status, fitness::RunStatus::Ok) << run.message;
  const std::vector<std::byte>& x = w.inputs.at("x");
  const std::vector<std::byte>& y = run.buffers.at(1);
  for (std::size_t i = 0; i < 1001; ++i) {
    float xi = 0, yi = 0;
    std::memcpy(&xi, x.data() + 4 * i, 4);
    std::memcpy(&yi, y.data() + 4 * i, 4);
    ASSERT_FLOAT_EQ(yi, (i % 2 == 0 ? 2.f : -1.f) * xi + 0.5f) << i;
  }
}

}  // namespace
}  // namespace gi
