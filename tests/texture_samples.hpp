#pragma once
// Samples of a texture over a 4 x 3 x 2 CUDA array holding x + 10 y + 100 z
// at texel (x, y, z), with the value each sampler must give: shared by the
// CPU emulator's test (texture_array_test.cpp) and the GPU's
// (gpu_runner_test.cpp). Linear interpolation of a linear function is the
// function itself between texel centres, and the fractions here are
// quarters, which the GPU's 8-bit weights hold exactly.
#include <cstddef>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::test {

// Reads the texture at each of n points (x, y, z) of `points`.
inline constexpr const char* kSampleVolume = R"(
extern "C" __global__ void sample_volume(cudaTextureObject_t volume, const float* points, float* out, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) out[k] = tex3D<float>(volume, points[3 * k], points[3 * k + 1], points[3 * k + 2]);
}
)";

struct TextureSample {
  fitness::TextureFilter filter;
  fitness::TextureAddress address;
  bool normalized;
  float x, y, z;
  float want;
};

inline std::vector<float> sample_volume_texels() {
  std::vector<float> v;
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) v.push_back(static_cast<float>(x + 10 * y + 100 * z));
  return v;
}

inline std::vector<TextureSample> texture_samples() {
  using fitness::TextureAddress;
  using fitness::TextureFilter;
  const auto P = TextureFilter::Point, L = TextureFilter::Linear;
  const auto C = TextureAddress::Clamp, B = TextureAddress::Border;
  return {
      // Point: the texel holding the coordinate; clamped to the edge outside.
      {P, C, false, 1.75f, 1.25f, 1.0f, 111.0f},
      {P, C, false, -3.0f, 7.0f, 0.25f, 20.0f},
      // Border: zero outside.
      {P, B, false, -3.0f, 1.0f, 1.0f, 0.0f},
      {P, B, false, 3.5f, 2.5f, 1.5f, 123.0f},
      // Linear: texel centres at i + 0.5.
      {L, C, false, 1.75f, 1.25f, 1.0f, 1.25f + 7.5f + 50.0f},
      {L, C, false, 0.0f, 0.5f, 0.5f, 0.0f},
      {L, C, false, 4.0f, 3.0f, 2.0f, 123.0f},
      // Between a border texel (0) and texel (0, 1, 0) = 10, weight 3/4.
      {L, B, false, 0.25f, 1.5f, 0.5f, 7.5f},
      // Normalised: (0.3, 0.5, 0.75) across 4 x 3 x 2 is (1.2, 1.5, 1.5).
      {P, C, true, 0.3f, 0.5f, 0.75f, 111.0f},
  };
}

}  // namespace gi::test
