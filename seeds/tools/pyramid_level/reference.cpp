// CPU reference and input generator for pyramid_level.
//
// Generator "pyramid_image": a T1-like brain image (seeds/common
// brain_phantom.hpp), the finest level of a registration pyramid, and the
// normalised binomial kernel of 2 radius + 1 taps (radius 2: (1, 4, 6, 4, 1) / 16).
// Variables (all optional):
//   dim: [x, y, z] or n    input image size (default 217^3)
//   radius: r              kernel radius in voxels (default 2)
//   weights: [w, ...]      explicit taps per axis instead of the binomial ones
//                          (odd count; not with radius), e.g. [-0.5, 0, 0.5]:
//                          their products sum to exactly 0 (the zero-weight-sum case)
// Derived variables: inputDimX/Y/Z, inputVoxelNumber, outputDimX/Y/Z
// ((dim + 1) / 2), outputVoxelNumber, kernelRadius, kernelSize.
// Inputs: input (float), kernelWeights (float).
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_pyramid_image(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("pyramid_image", variables, {"dim", "radius", "weights"});
  const Dim3 in = args.dims("dim", Dim3{217, 217, 217});
  std::vector<float> weights = tools::explicit_weights(args);
  const int radius = weights.empty() ? args.integer("radius", 2, 0, 16) : static_cast<int>(weights.size() / 2);
  if (weights.empty()) weights = tools::binomial_weights(radius);
  const Dim3 out{tools::pyramid_extent(in.x), tools::pyramid_extent(in.y), tools::pyramid_extent(in.z)};
  Workload w;
  w.variables = {
      {"inputDimX", in.x},
      {"inputDimY", in.y},
      {"inputDimZ", in.z},
      {"inputVoxelNumber", static_cast<double>(in.voxels())},
      {"outputDimX", out.x},
      {"outputDimY", out.y},
      {"outputDimZ", out.z},
      {"outputVoxelNumber", static_cast<double>(out.voxels())},
      {"kernelRadius", radius},
      {"kernelSize", 2 * radius + 1},
  };
  w.inputs["input"] = to_bytes(tissue_image(in, seed));
  w.inputs["kernelWeights"] = to_bytes(weights);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "pyramid_level"); }

// The weighted mean over the taps inside the input, in double; 0 where the
// used weights sum to 0.
ReferenceOutputs pyramid_level_reference(const Workload& w) {
  const Dim3 in{var(w, "inputDimX"), var(w, "inputDimY"), var(w, "inputDimZ")};
  const Dim3 out{var(w, "outputDimX"), var(w, "outputDimY"), var(w, "outputDimZ")};
  const int radius = var(w, "kernelRadius");
  const auto image = from_bytes<float>(w.inputs.at("input"), "input");
  const auto weights = from_bytes<float>(w.inputs.at("kernelWeights"), "kernelWeights");
  if (image.size() != in.voxels() || weights.size() != static_cast<std::size_t>(2 * radius + 1))
    throw std::runtime_error("pyramid_level reference: input sizes do not match the variables");
  std::vector<double> result(out.voxels());
  parallel_for(static_cast<std::size_t>(out.z), [&](std::size_t z0, std::size_t z1) {
    for (int z = static_cast<int>(z0); z < static_cast<int>(z1); ++z)
      for (int y = 0; y < out.y; ++y)
        for (int x = 0; x < out.x; ++x) {
          double sum = 0, weight_sum = 0;
          for (int c = -radius; c <= radius; ++c) {
            const int Z = 2 * z + c;
            if (Z < 0 || Z >= in.z) continue;
            for (int b = -radius; b <= radius; ++b) {
              const int Y = 2 * y + b;
              if (Y < 0 || Y >= in.y) continue;
              for (int a = -radius; a <= radius; ++a) {
                const int X = 2 * x + a;
                if (X < 0 || X >= in.x) continue;
                const double weight = static_cast<double>(weights[static_cast<std::size_t>(a + radius)]) *
                                      weights[static_cast<std::size_t>(b + radius)] *
                                      weights[static_cast<std::size_t>(c + radius)];
                sum += weight * image[in.index(X, Y, Z)];
                weight_sum += weight;
              }
            }
          }
          result[out.index(x, y, z)] = weight_sum != 0 ? sum / weight_sum : 0.0;
        }
  });
  return {{"output", std::move(result)}};
}

}  // namespace

GI_REGISTER_GENERATOR("pyramid_image", generate_pyramid_image);
GI_REGISTER_REFERENCE("pyramid_level", pyramid_level_reference);
