// CPU reference and input generator for deformation_compose.
//
// Generator "deformation_pair": two dense deformation fields on the same
// grid, as a registration composes them - the inner field A is the current
// transformation (small affine plus smooth B-spline, as
// "dense_deformation_field"), the outer field B an update (a smooth B-spline
// deformation without affine part, from an independent control grid).
// Near the border A maps some voxels outside the image, which exercises the
// extrapolation rule. Variables (all optional):
//   dim: [x, y, z] or n          image size, each axis >= 2 (default 217^3)
//   spacing: s or [x, y, z]      A's control point spacing (default 5)
//   amplitude: a                 A's B-spline displacement size (default 3)
//   rotation, scaling, translation: A's affine part (defaults 3 degrees, 0.03, 2)
//   outer_spacing: s or [x, y, z]  B's control point spacing (default: spacing)
//   outer_amplitude: a           B's displacement size in voxels (default 2)
// Derived variables: imageDimX/Y/Z, voxelNumber.
// Inputs: innerField, outerField (float4, w = 0).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"
#include "seeds/deformation/deformation_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_deformation_pair(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("deformation_pair", variables,
                           {"dim", "spacing", "amplitude", "rotation", "scaling", "translation", "outer_spacing",
                            "outer_amplitude"});
  const Dim3 image = dense_field_dims(args);
  const DenseFieldOptions inner = dense_field_options(args, image, seed, kStreamAffine);
  DenseFieldOptions outer;
  outer.spacing = args.vec3("outer_spacing", inner.spacing, 1.0, 64.0);
  outer.amplitude = args.number("outer_amplitude", 2.0, 0.0, 50.0);
  Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"voxelNumber", static_cast<double>(image.voxels())},
  };
  w.inputs["innerField"] = to_bytes(dense_deformation(image, inner, seed));
  w.inputs["outerField"] = to_bytes(dense_deformation(image, outer, hash3(seed, kStreamField, 0x6f75746572)));
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "deformation_compose"); }

// B(p) = p + the trilinear interpolation of B's displacement with corner
// indices clamped into the image; w = 0.
ReferenceOutputs compose_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const auto inner = from_bytes<Float4>(w.inputs.at("innerField"), "innerField");
  const auto outer = from_bytes<Float4>(w.inputs.at("outerField"), "outerField");
  if (inner.size() != image.voxels() || outer.size() != image.voxels())
    throw std::runtime_error("deformation_compose reference: innerField and outerField must hold one vector per "
                             "voxel (" + std::to_string(image.voxels()) + ")");
  const int dims[3] = {image.x, image.y, image.z};
  std::vector<double> out(4 * inner.size());
  parallel_for(inner.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const double p[3] = {inner[t].x, inner[t].y, inner[t].z};
      if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2]))
        throw std::runtime_error("deformation_compose reference: innerField[" + std::to_string(t) +
                                 "] is not finite");
      int pre[3];
      double weight[3][2];
      for (int a = 0; a < 3; ++a) {
        pre[a] = static_cast<int>(std::floor(p[a]));
        weight[a][1] = p[a] - pre[a];
        weight[a][0] = 1.0 - weight[a][1];
      }
      double d[3] = {0, 0, 0};
      for (int c = 0; c < 2; ++c)
        for (int b = 0; b < 2; ++b)
          for (int a = 0; a < 2; ++a) {
            const int u[3] = {std::clamp(pre[0] + a, 0, dims[0] - 1), std::clamp(pre[1] + b, 0, dims[1] - 1),
                              std::clamp(pre[2] + c, 0, dims[2] - 1)};
            const Float4& node = outer[image.index(u[0], u[1], u[2])];
            const double wt = weight[0][a] * weight[1][b] * weight[2][c];
            d[0] += wt * (static_cast<double>(node.x) - u[0]);
            d[1] += wt * (static_cast<double>(node.y) - u[1]);
            d[2] += wt * (static_cast<double>(node.z) - u[2]);
          }
      for (int a = 0; a < 3; ++a) out[4 * t + static_cast<std::size_t>(a)] = p[a] + d[a];
      out[4 * t + 3] = 0.0;
    }
  });
  return {{"composedField", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("deformation_pair", generate_deformation_pair);
GI_REGISTER_REFERENCE("deformation_compose", compose_reference);
