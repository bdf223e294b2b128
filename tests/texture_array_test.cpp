// Textures over CUDA arrays (fitness/workload/launch_plan.hpp, TextureArray):
// the spec's "texture": {"extent", "filter", "address", "normalized"}, the
// CPU emulator's tex1D/tex2D/tex3D, and gi init reading the extent from the
// guards around a tex3D<T> fetch, and porting a 3-D texture reference.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/emulation/emulated_module.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "gi/seed/texture_port.hpp"
#include "parameter_use_support.hpp"
#include "tests/plan_helpers.hpp"
#include "tests/texture_samples.hpp"

namespace gi {
namespace {

using fitness::ElementType;
using fitness::ParamRole;
using fitness::TextureAddress;
using fitness::TextureFilter;
using json = nlohmann::json;

constexpr const char* kGradient = R"(
extern "C" __global__ void gradient_x(cudaTextureObject_t image, float* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  int z = blockIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  float here = tex3D<float>(image, x, y, z);
  float left = x > 0 ? tex3D<float>(image, x - 1, y, z) : here;
  out[x + nx * (y + ny * z)] = here - left;
}
)";

json gradient_spec() {
  return json::parse(R"JSON({
    "entry": "gradient_x", "family": "user", "work_item": "one voxel", "reference": "seed",
    "parameters": [
      {"name": "image", "type": "float", "role": "in", "count": "nx * ny * nz",
       "texture": {"extent": ["nx", "ny", "nz"], "filter": "point", "address": "border"}},
      {"name": "out", "type": "float", "role": "out", "count": "nx * ny * nz"},
      {"name": "nx", "type": "int", "role": "scalar", "value": "nx"},
      {"name": "ny", "type": "int", "role": "scalar", "value": "ny"},
      {"name": "nz", "type": "int", "role": "scalar", "value": "nz"}],
    "launch": {"block": ["B", 1, 1], "grid": ["ceil_div(nx, B)", "ny", "nz"]},
    "tolerance": {"abs": 0, "rel": 0}, "tolerance_note": "exact",
    "min_bytes": "8 * nx * ny * nz",
    "tunables": {"block_sizes": [128], "options": [[]]},
    "workloads": {
      "train": {"generator": "random", "variables": {"nx": 40, "ny": 3, "nz": 2, "inputs": {"image": {"uniform": [0, 1]}}}},
      "validate": [
        {"generator": "random", "variables": {"nx": 10, "ny": 2, "nz": 2, "inputs": {"image": {"uniform": [0, 1]}}}},
        {"generator": "random", "variables": {"nx": 11, "ny": 2, "nz": 2, "inputs": {"image": {"uniform": [0, 1]}}}},
        {"generator": "random", "variables": {"nx": 12, "ny": 2, "nz": 2, "inputs": {"image": {"uniform": [0, 1]}}}},
        {"generator": "random", "variables": {"nx": 13, "ny": 2, "nz": 2, "inputs": {"image": {"uniform": [0, 1]}}}},
        {"generator": "random", "variables": {"nx": 14, "ny": 2, "nz": 2, "inputs": {"image": {"uniform": [0, 1]}}}}]}
  })JSON");
}

std::string spec_error(const json& j) {
  try {
    const fitness::KernelSpec k = fitness::parse_kernel_spec(j, "s.json", kGradient, "kernel.cu", {.registry = false});
    fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 128);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(loaded)";
}

// The object form of "texture" gives each workload's plan the array's
// extent and sampler; what CUDA cannot make is refused by its field.
TEST(TextureArray, TheSpecGivesTheArraysExtentAndSampler) {
  const fitness::KernelSpec k =
      fitness::parse_kernel_spec(gradient_spec(), "s.json", kGradient, "kernel.cu", {.registry = false});
  ASSERT_EQ(k.parameters[0].texture_extent.size(), 3u);
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 128);
  const fitness::BufferArg& image = plan.buffers[0];
  EXPECT_TRUE(image.texture);
  EXPECT_EQ(image.array.dimensions, 3u);
  EXPECT_EQ(image.array.extent, (std::array<std::size_t, 3>{40, 3, 2}));
  EXPECT_EQ(image.array.filter, TextureFilter::Point);
  EXPECT_EQ(image.array.address, TextureAddress::Border);
  EXPECT_FALSE(image.array.normalized);
  EXPECT_EQ(plan.buffers[1].array.dimensions, 0u);

  json j = gradient_spec();
  j["parameters"][0]["texture"]["extent"] = {"nx", "ny", "nz", "1"};
  EXPECT_NE(spec_error(j).find("parameters[0].texture.extent: expected an array of one to three expressions"),
            std::string::npos) << spec_error(j);
  j = gradient_spec();
  j["parameters"][0]["texture"]["extent"] = {"nx", "ny"};
  EXPECT_NE(spec_error(j).find("parameters[0].texture.extent: the array's extent 40 x 3 holds 120 elements, but "
                               "count 'nx * ny * nz' is 240"), std::string::npos) << spec_error(j);
  j = gradient_spec();
  j["parameters"][0]["type"] = "int";
  j["parameters"][0]["texture"]["filter"] = "linear";
  EXPECT_NE(spec_error(j).find("parameters[0].texture.filter: linear filtering of int"), std::string::npos)
      << spec_error(j);
  j = gradient_spec();
  j["parameters"][0]["texture"]["address"] = "wrap";
  EXPECT_NE(spec_error(j).find("parameters[0].texture.address: expected clamp or border, found 'wrap'"),
            std::string::npos) << spec_error(j);
  j = gradient_spec();
  j["parameters"][0]["texture"]["normalised"] = true;
  EXPECT_NE(spec_error(j).find("parameters[0].texture"), std::string::npos) << spec_error(j);
  j = gradient_spec();
  j["workloads"]["train"]["variables"]["nx"] = 20000;  // past a 3-D array's 16384
  EXPECT_NE(spec_error(j).find("texture.extent[0]: 'nx' gave 20000: expected a CUDA array's extent"),
            std::string::npos) << spec_error(j);
}

class EmulatedTextures : public ::testing::Test {
 protected:
  void SetUp() override {
    if (fitness::emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  }
};

// Point and linear filtering, clamp and border, plain and normalised
// coordinates, each at the values test::texture_samples() works out.
TEST_F(EmulatedTextures, Tex3DSamplesAsTheSamplerSays) {
  fitness::EmulatorOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
  const fitness::CpuEmulator emulator(o);
  const fitness::EmulatedKernel k = emulator.load(test::kSampleVolume, "sample_volume", "test.cu");
  ASSERT_TRUE(k.ok()) << k.error;
  const std::vector<float> texels = test::sample_volume_texels();
  for (const test::TextureSample& s : test::texture_samples()) {
    fitness::LaunchPlan p;
    p.entry = "sample_volume";
    p.buffers = {fitness::BufferArg{"volume", ParamRole::In, ElementType::F32, texels.size(), test::bytes_of(texels), true,
                                    fitness::TextureArray{3, {4, 3, 2}, s.filter, s.address, s.normalized}},
                 fitness::BufferArg{"points", ParamRole::In, ElementType::F32, 3,
                                    test::bytes_of(std::vector<float>{s.x, s.y, s.z})},
                 fitness::BufferArg{"out", ParamRole::Out, ElementType::F32, 1, {}}};
    p.scalars = {test::scalar<int>("n", 1)};
    p.params = {{true, 0}, {true, 1}, {true, 2}, {false, 0}};
    p.grid = {1, 1, 1};
    p.block = {32, 1, 1};
    fitness::ExpectedOutput e;
    e.buffer = "out";
    e.values = {s.want};
    const fitness::CheckReport r = emulator.run_checked(k, p, {e}, fitness::Tolerance{1e-5, 0});
    EXPECT_TRUE(r.ok()) << "at (" << s.x << ", " << s.y << ", " << s.z << "): " << r.message;
  }
}

// gi init: the guards around the fetches bound each coordinate, so the
// array's extent is what they name; whole coordinates draft point sampling,
// float ones linear, `(x + 0.5f) / nx` normalised coordinates.
TEST(TextureArray, GiInitReadsTheExtentFromTheGuardsOfEachCoordinate) {
  const SpecScaffold s = scaffold_spec(kGradient, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"nx=256", "ny=256", "nz=128"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  const auto& image = s.spec["parameters"][0];
  EXPECT_EQ(image["count"], "nx * ny * nz");
  EXPECT_EQ(image["texture"]["extent"], nlohmann::ordered_json::parse(R"(["nx", "ny", "nz"])"));
  EXPECT_EQ(image["texture"]["filter"], "point");
  EXPECT_EQ(image["texture"]["normalized"], false);
  // The drafted spec loads and its plans hold the array.
  const fitness::KernelSpec k =
      fitness::parse_kernel_spec(json::parse(s.spec.dump()), "spec.json", kGradient, "k.cu", {.registry = false});
  const fitness::LaunchPlan plan = fitness::build_launch_plan(k, fitness::generate_workload(k, k.train, 1), 128);
  EXPECT_EQ(plan.buffers[0].array.extent, (std::array<std::size_t, 3>{256, 256, 128}));

  const std::string resample = R"(
__global__ void resample(cudaTextureObject_t image, const float2* shift, float* out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x >= nx || y >= ny) return;
  float fx = x + 0.5f;
  float fy = y + 0.5f;
  out[x + nx * y] = tex2D<float>(image, fx, fy) + tex2D<float>(image, (x + 0.5f) / (float)nx, (y + 0.5f) / (float)ny);
}
)";
  // Plain and normalised coordinates on one texture: no sampler reads both.
  EXPECT_NE(test::count(test::use_of(resample), "image").find("normalised and with plain coordinates"),
            std::string::npos) << test::count(test::use_of(resample), "image");
  std::string plain = resample;
  const std::string second = " + tex2D<float>(image, (x + 0.5f) / (float)nx, (y + 0.5f) / (float)ny)";
  plain.replace(plain.find(second), second.size(), "");
  const auto linear = test::pointer(test::use_of(plain), "image");
  ASSERT_TRUE(linear.count) << linear.refusal;
  EXPECT_EQ(linear.count->text(), "nx * ny");
  EXPECT_TRUE(linear.texture_real_coordinates);
  EXPECT_FALSE(linear.texture_normalized);
  std::string normalised = plain;
  normalised.replace(normalised.find("tex2D<float>(image, fx, fy)"), std::string("tex2D<float>(image, fx, fy)").size(),
                     "tex2D<float>(image, (x + 0.5f) / (float)nx, (y + 0.5f) / (float)ny)");
  const auto across = test::pointer(test::use_of(normalised), "image");
  ASSERT_TRUE(across.count) << across.refusal;
  EXPECT_EQ(across.count->text(), "nx * ny");
  EXPECT_TRUE(across.texture_normalized);
  const SpecScaffold n = scaffold_spec(normalised, "k.cu", std::nullopt, "user", parse_init_sizes({"nx=512", "ny=512"}, {}));
  EXPECT_EQ(n.spec["parameters"][0]["texture"]["filter"], "linear");
  EXPECT_EQ(n.spec["parameters"][0]["texture"]["normalized"], true);

  // A coordinate from loaded data, or that no guard bounds, leaves the extent to the user.
  const std::string loaded = R"(
__global__ void k(cudaTextureObject_t image, const int* voxels, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(image, voxels[i], 0);
}
)";
  const auto from_data = test::pointer(test::use_of(loaded), "image");
  EXPECT_FALSE(from_data.count);
  EXPECT_TRUE(from_data.index_from_data);
  EXPECT_NE(from_data.refusal.find("coordinate 1 of tex2D"), std::string::npos) << from_data.refusal;
  const SpecScaffold l = scaffold_spec(loaded, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1000"}, {}));
  EXPECT_NE(l.spec["parameters"][0]["texture"]["extent"].get<std::string>().find("FILL"), std::string::npos);
}

// A 3-D texture reference read with tex3D becomes a texture object
// parameter read with tex3D<T>, as a 1-D one read with tex1Dfetch does.
TEST(TextureArray, AThreeDimensionalTextureReferenceIsPorted) {
  const std::string source = R"(
texture<float, 3, cudaReadModeElementType> volumeTexture;
__global__ void copy_volume(float* out, int nx, int ny, int nz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  const int z = blockIdx.z;
  if (x < nx && y < ny && z < nz) out[x + nx * (y + ny * z)] = tex3D(volumeTexture, x, y, z);
}
)";
  const TexturePort port = port_texture_references(source, "k.cu", "");
  ASSERT_TRUE(port.refusal.empty()) << port.refusal;
  ASSERT_EQ(port.ported.size(), 1u);
  EXPECT_NE(port.ported[0].find("texture<float, 3>"), std::string::npos) << port.ported[0];
  EXPECT_NE(port.source.find("int nz, cudaTextureObject_t volumeTexture)"), std::string::npos) << port.source;
  EXPECT_NE(port.source.find("tex3D<float>(volumeTexture, x, y, z)"), std::string::npos) << port.source;
  const SpecScaffold s = scaffold_spec(port.source, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"nx=128", "ny=128", "nz=64"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  EXPECT_EQ(s.spec["parameters"][4]["texture"]["extent"], nlohmann::ordered_json::parse(R"(["nx", "ny", "nz"])"));

  // Read in 2-D by a 3-D reference's name: refused, with where.
  std::string wrong = source;
  wrong.replace(wrong.find("tex3D(volumeTexture, x, y, z)"), std::string("tex3D(volumeTexture, x, y, z)").size(),
                "tex2D(volumeTexture, x, y)");
  const TexturePort refused = port_texture_references(wrong, "k.cu", "");
  EXPECT_NE(refused.refusal.find("other than as tex3D(volumeTexture, ...)"), std::string::npos) << refused.refusal;
  // Layered textures stay refused.
  std::string layered = source;
  layered.replace(layered.find("float, 3,"), std::string("float, 3,").size(), "float, cudaTextureType2DLayered,");
  EXPECT_NE(port_texture_references(layered, "k.cu", "").refusal.find("layered and cubemap"), std::string::npos);
}

}  // namespace
}  // namespace gi
