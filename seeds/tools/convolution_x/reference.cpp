// CPU reference and input generator for convolution_x.
//
// Generator "convolution_field": a smooth gradient-like float4 vector field
// (the central-difference gradient of a smooth random image, plus mild noise;
// w holds junk the kernel must not use) and a normalised Gaussian kernel.
// Variables (all optional):
//   dim: [x, y, z] or n    image size (default 217^3)
//   radius: r              kernel radius in voxels (default 3; 2r + 1 taps)
//   sigma: s               Gaussian width in voxels (default r / 3, at least 0.5)
//   amplitude: a           typical vector length (default 1)
//   weights: [w, ...]      explicit taps instead of the Gaussian (odd count;
//                          not with radius or sigma), e.g. [-0.5, 0, 0.5]:
//                          they sum to exactly 0, the zero-weight-sum case
// Derived variables: imageDimX/Y/Z, voxelNumber, kernelRadius, kernelSize.
// Inputs: input (float4), kernelWeights (float).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"
#include "seeds/common/smooth_noise.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

std::vector<float> gaussian_weights(int radius, double sigma) {
  std::vector<double> w(static_cast<std::size_t>(2 * radius + 1));
  double sum = 0;
  for (int i = -radius; i <= radius; ++i) sum += w[static_cast<std::size_t>(i + radius)] = std::exp(-0.5 * i * i / (sigma * sigma));
  std::vector<float> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(w[i] / sum);
  return out;
}

Workload generate_convolution_field(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("convolution_field", variables, {"dim", "radius", "sigma", "amplitude", "weights"});
  const Dim3 dims = args.dims("dim", Dim3{217, 217, 217});
  std::vector<float> weights = tools::explicit_weights(args);
  const int radius = weights.empty() ? args.integer("radius", 3, 0, 64) : static_cast<int>(weights.size() / 2);
  if (weights.empty())
    weights = gaussian_weights(radius, args.number("sigma", std::max(0.5, radius / 3.0), 0.1, 100.0));
  const double amplitude = args.number("amplitude", 1.0, 0.0, 1e4);

  // A smooth image of two scales; its gradient is the field.
  const double extent = (dims.x + dims.y + dims.z) / 3.0;
  const SmoothNoise coarse(dims, std::max(4.0, 0.08 * extent), seed, kStreamField * 16 + 0);
  const SmoothNoise fine(dims, std::max(2.0, 0.03 * extent), seed, kStreamField * 16 + 1);
  std::vector<float> image(dims.voxels());
  const std::size_t sx = 1, sy = static_cast<std::size_t>(dims.x), sz = sy * static_cast<std::size_t>(dims.y);
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t z = z0; z < z1; ++z)
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x)
          image[z * sz + static_cast<std::size_t>(y) * sy + static_cast<std::size_t>(x)] = static_cast<float>(
              coarse.at(x, y, static_cast<int>(z)) + 0.3 * fine.at(x, y, static_cast<int>(z)));
  });
  // Scale so that the typical gradient length is about `amplitude`.
  const double gain = amplitude * 0.08 * extent;
  std::vector<Float4> field(dims.voxels());
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t z = z0; z < z1; ++z)
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x) {
          const std::size_t i = z * sz + static_cast<std::size_t>(y) * sy + static_cast<std::size_t>(x);
          // One-sided differences at the border, central inside.
          auto diff = [&](int at, int extent_axis, std::size_t stride) {
            const std::size_t lo = at > 0 ? i - stride : i, hi = at + 1 < extent_axis ? i + stride : i;
            const int span = (at > 0 ? 1 : 0) + (at + 1 < extent_axis ? 1 : 0);
            return span == 0 ? 0.0 : (static_cast<double>(image[hi]) - image[lo]) / span;
          };
          const double noise = 0.03 * amplitude;
          field[i].x = static_cast<float>(gain * diff(x, dims.x, sx) + noise * hash_normal(seed, kStreamFieldNoise * 4 + 0, i));
          field[i].y = static_cast<float>(gain * diff(y, dims.y, sy) + noise * hash_normal(seed, kStreamFieldNoise * 4 + 1, i));
          field[i].z = static_cast<float>(gain * diff(static_cast<int>(z), dims.z, sz) +
                                          noise * hash_normal(seed, kStreamFieldNoise * 4 + 2, i));
          field[i].w = static_cast<float>(hash_uniform(seed, kStreamJunk, i, -1000, 1000));
        }
  });

  Workload w;
  w.variables = {
      {"imageDimX", dims.x},
      {"imageDimY", dims.y},
      {"imageDimZ", dims.z},
      {"voxelNumber", static_cast<double>(dims.voxels())},
      {"kernelRadius", radius},
      {"kernelSize", 2 * radius + 1},
  };
  w.inputs["input"] = to_bytes(field);
  w.inputs["kernelWeights"] = to_bytes(weights);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "convolution_x"); }

// Taps outside the image are dropped and the sum renormalised by the weights
// actually used; a zero weight sum gives 0. Output w is 0.
ReferenceOutputs convolution_x_reference(const Workload& w) {
  const Dim3 dims{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const int radius = var(w, "kernelRadius");
  const auto input = from_bytes<Float4>(w.inputs.at("input"), "input");
  const auto weights = from_bytes<float>(w.inputs.at("kernelWeights"), "kernelWeights");
  if (input.size() != dims.voxels() || weights.size() != static_cast<std::size_t>(2 * radius + 1))
    throw std::runtime_error("convolution_x reference: input sizes do not match the variables");
  std::vector<double> out(4 * input.size());
  parallel_for(input.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int x = static_cast<int>(t % static_cast<std::size_t>(dims.x));
      double sum[3] = {0, 0, 0}, weight_sum = 0;
      for (int i = -radius; i <= radius; ++i) {
        if (x + i < 0 || x + i >= dims.x) continue;
        const double weight = weights[static_cast<std::size_t>(i + radius)];
        const Float4& n = input[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(t) + i)];
        sum[0] += weight * n.x;
        sum[1] += weight * n.y;
        sum[2] += weight * n.z;
        weight_sum += weight;
      }
      for (int c = 0; c < 3; ++c) out[4 * t + static_cast<std::size_t>(c)] = weight_sum != 0 ? sum[c] / weight_sum : 0.0;
      out[4 * t + 3] = 0.0;
    }
  });
  return {{"output", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("convolution_field", generate_convolution_field);
GI_REGISTER_REFERENCE("convolution_x", convolution_x_reference);
