// CPU reference and input generator for warped_image_gradient.
//
// Generator "warped_gradient_brain": the inputs of trilinear_brain without
// the padding value (a tissue floating image, the reference image's active
// voxels and the positions a B-spline deformation composed with a small rigid
// misalignment maps them to; see seeds/resampling/resampling_support.hpp for
// the variables: dim, floating_dim, spacing, amplitude, mask).
// Derived variables: referenceDimX/Y/Z, referenceVoxelNumber,
// floatingDimX/Y/Z, floatingVoxelNumber, activeVoxelNumber.
// Inputs: floatingImage (float), deformationField (float4), activeVoxels (int).
#include <cmath>
#include <limits>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/resampling/resampling_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_warped_gradient_brain(const nlohmann::json& variables, std::uint64_t seed) {
  const ResamplingCase c = resampling_case("warped_gradient_brain", variables, seed, false);
  Workload w;
  w.variables = resampling_variables(c, false);
  w.inputs["floatingImage"] = to_bytes(c.image);
  w.inputs["deformationField"] = to_bytes(c.positions);
  w.inputs["activeVoxels"] = to_bytes(c.active);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "warped_image_gradient"); }

// The derivative of the trilinear interpolant in the cell floor(p) ..
// floor(p) + 1; zero where a corner of that cell lies outside the floating
// image. Output w is 0; non-active voxels are not written (NaN).
ReferenceOutputs warped_gradient_reference(const Workload& w) {
  const Dim3 floating{var(w, "floatingDimX"), var(w, "floatingDimY"), var(w, "floatingDimZ")};
  const Dim3 reference{var(w, "referenceDimX"), var(w, "referenceDimY"), var(w, "referenceDimZ")};
  const auto image = from_bytes<float>(w.inputs.at("floatingImage"), "floatingImage");
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "deformationField");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  if (image.size() != floating.voxels() || field.size() != active.size())
    throw std::runtime_error("warped_image_gradient reference: input sizes do not match the variables");
  std::vector<double> gradient(4 * reference.voxels(), std::numeric_limits<double>::quiet_NaN());
  for (const std::int32_t i : active)
    if (i < 0 || static_cast<std::size_t>(i) >= reference.voxels())
      throw std::runtime_error("warped_image_gradient reference: active voxel " + std::to_string(i) +
                               " outside the reference image");
  const int extent[3] = {floating.x, floating.y, floating.z};
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const double pos[3] = {field[t].x, field[t].y, field[t].z};
      int pre[3];
      double weight[3][2];
      bool inside = true;
      for (int a = 0; a < 3; ++a) {
        pre[a] = static_cast<int>(std::floor(pos[a]));
        const double rel = pos[a] - pre[a];
        weight[a][0] = 1.0 - rel;
        weight[a][1] = rel;
        inside = inside && pre[a] >= 0 && pre[a] + 1 < extent[a];
      }
      const double derivative[2] = {-1.0, 1.0};
      double g[3] = {0, 0, 0};
      if (inside) {
        for (int c = 0; c < 2; ++c)
          for (int b = 0; b < 2; ++b)
            for (int a = 0; a < 2; ++a) {
              const double intensity = image[floating.index(pre[0] + a, pre[1] + b, pre[2] + c)];
              g[0] += derivative[a] * weight[1][b] * weight[2][c] * intensity;
              g[1] += weight[0][a] * derivative[b] * weight[2][c] * intensity;
              g[2] += weight[0][a] * weight[1][b] * derivative[c] * intensity;
            }
      }
      const std::size_t out = 4 * static_cast<std::size_t>(active[t]);
      gradient[out + 0] = g[0];
      gradient[out + 1] = g[1];
      gradient[out + 2] = g[2];
      gradient[out + 3] = 0.0;
    }
  });
  return {{"warpedGradient", std::move(gradient)}};
}

}  // namespace

GI_REGISTER_GENERATOR("warped_gradient_brain", generate_warped_gradient_brain);
GI_REGISTER_REFERENCE("warped_image_gradient", warped_gradient_reference);
