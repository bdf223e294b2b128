// A texture reference passed whole to a helper written for references
// (CubicInterpolationCUDA's `cubicTex2D(coeffs, x, y)`, a template over
// `texture<T, 2, mode>` in a header the build finds with -I): gi init passes
// `texture<T, dim>(object)`, which its shim file defines, so the helper
// builds unchanged with NVRTC; the array's extent comes from `--size NAME=W,H`
// (gi/seed/texture_port.hpp, analysis/parameter_use_access.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "gi/seed/texture_port.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;

// Written for this test: a two-tap sampler in the style of the cubic
// B-spline helpers, reading the reference it is given.
constexpr const char* kHelperHeader = R"(#pragma once
typedef unsigned int uint;
template <class T, enum cudaTextureReadMode mode>
__device__ float two_taps(texture<T, 2, mode> tex, float x, float y) {
  return 0.5f * (tex2D(tex, x, y) + tex2D(tex, x + 1.0f, y));
}
)";

constexpr const char* kKernel = R"(#include <stdio.h>
#include <cutil.h>
#include <two_taps.cu>

texture<float, 2, cudaReadModeElementType> image;

__global__ void smooth(float* out, uint width, uint height) {
  uint x = blockIdx.x * blockDim.x + threadIdx.x;
  uint y = blockIdx.y;
  if (x < width && y < height) out[y * width + x] = two_taps(image, x + 0.5f, y + 0.5f);
}
)";

class TextureHelperPort : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gi-texture-helper-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "include");
    std::ofstream(root_ / "include/two_taps.cu") << kHelperHeader;
    std::ofstream(root_ / "smooth.cu") << kKernel;
  }
  void TearDown() override { fs::remove_all(root_); }
  test::CommandOutput init(const std::string& sizes) const {
    return test::run_gi("init \"" + (root_ / "smooth.cu").string() + "\" --out \"" + (root_ / "seed").string() +
                        "\" --force --include-dir \"" + (root_ / "include").string() + "\" " + sizes);
  }
  nlohmann::json spec() const {
    std::ifstream in(root_ / "seed/spec.json");
    return nlohmann::json::parse(in);
  }
  fs::path root_;
};

TEST(TexturePort, AReferencePassedToAFunctionIsWrapped) {
  const TexturePort port = port_texture_references(kKernel, "smooth.cu", "");
  ASSERT_TRUE(port.refusal.empty()) << port.refusal;
  EXPECT_TRUE(port.wraps_references);
  EXPECT_NE(port.source.find("uint height, cudaTextureObject_t image)"), std::string::npos) << port.source;
  EXPECT_NE(port.source.find("two_taps(texture<float, 2>(image), x + 0.5f"), std::string::npos) << port.source;
  // A reference read only by fetches needs no shim.
  const TexturePort plain = port_texture_references(
      "texture<float, 1, cudaReadModeElementType> t;\n"
      "__global__ void k(float* o, int n) { int i = threadIdx.x; if (i < n) o[i] = tex1Dfetch(t, i); }\n",
      "k.cu", "");
  ASSERT_TRUE(plain.refusal.empty()) << plain.refusal;
  EXPECT_FALSE(plain.wraps_references);
}

// With the extent given, the draft has no FILL and builds with NVRTC: the
// helper's header through the include folder, <cutil.h> (the old SDK's
// host utilities) set aside, the shim first among the pre-includes.
TEST_F(TextureHelperPort, WithItsExtentGivenTheDraftBuilds) {
  const test::CommandOutput r = init("--size width=300 --size height=200 --size image=64,32");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(0 fields to fill)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("problem: "), std::string::npos) << r.output;
  const nlohmann::json s = spec();
  EXPECT_EQ(s["pre_includes"][0], kTextureReferenceShimFile) << s.dump(2);
  EXPECT_TRUE(fs::exists(root_ / "seed" / kTextureReferenceShimFile));
  const nlohmann::json& image = s["parameters"][3];
  EXPECT_EQ(image["name"], "image");
  EXPECT_EQ(image["type"], "float");
  EXPECT_EQ(image["count"], "image_x * image_y");
  EXPECT_EQ(image["texture"]["extent"], nlohmann::json::array({"image_x", "image_y"}));
  EXPECT_EQ(s["workloads"]["train"]["variables"]["image_x"], 64);
}

// Without it, gi init says where the texture goes and how to give it.
TEST_F(TextureHelperPort, WithoutItsExtentTheFillNamesTheHelper) {
  const test::CommandOutput r = init("--size width=300 --size height=200");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string extent = spec()["parameters"][3]["texture"]["extent"].get<std::string>();
  EXPECT_EQ(extent.rfind("FILL", 0), 0u) << extent;
  EXPECT_NE(extent.find("passed to 'two_taps'"), std::string::npos) << extent;
  EXPECT_NE(extent.find("--size image=W,H"), std::string::npos) << extent;
}

}  // namespace
}  // namespace gi
