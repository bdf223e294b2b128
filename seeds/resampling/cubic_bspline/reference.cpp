// CPU reference and input generator for cubic_bspline_resample.
//
// Generator "cubic_bspline_brain": the inputs of trilinear_brain (a tissue
// floating image, the reference image's active voxels and the positions a
// B-spline deformation composed with a small rigid misalignment maps them to;
// see seeds/resampling/resampling_support.hpp for the variables: dim,
// floating_dim, spacing, amplitude, mask, padding), except that the kernel
// reads the image's cubic B-spline coefficients: the generator prefilters the
// tissue image on the CPU (in double, mirror boundaries) and rounds the
// coefficients to float.
// Derived variables: referenceDimX/Y/Z, referenceVoxelNumber,
// floatingDimX/Y/Z, floatingVoxelNumber, activeVoxelNumber, paddingValue.
// Inputs: floatingCoefficients (float), deformationField (float4),
// activeVoxels (int).
#include <cmath>
#include <limits>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/resampling/resampling_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_cubic_bspline_brain(const nlohmann::json& variables, std::uint64_t seed) {
  const ResamplingCase c = resampling_case("cubic_bspline_brain", variables, seed, true);
  const std::vector<double> coefficients = cubic_bspline_coefficients(c.image, c.floating);
  std::vector<float> rounded(coefficients.size());
  for (std::size_t i = 0; i < coefficients.size(); ++i) rounded[i] = static_cast<float>(coefficients[i]);
  Workload w;
  w.variables = resampling_variables(c, true);
  w.inputs["floatingCoefficients"] = to_bytes(rounded);
  w.inputs["deformationField"] = to_bytes(c.positions);
  w.inputs["activeVoxels"] = to_bytes(c.active);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "cubic_bspline_resample"); }

// The 4x4x4 coefficients floor(p) - 1 .. floor(p) + 2 weighted by the cubic
// B-spline basis; each one outside the floating image contributes the padding
// value with its weight. Non-active voxels are not written (NaN).
ReferenceOutputs cubic_bspline_reference(const Workload& w) {
  const Dim3 floating{var(w, "floatingDimX"), var(w, "floatingDimY"), var(w, "floatingDimZ")};
  const Dim3 reference{var(w, "referenceDimX"), var(w, "referenceDimY"), var(w, "referenceDimZ")};
  const double padding = w.variables.at("paddingValue");
  const auto coefficients = from_bytes<float>(w.inputs.at("floatingCoefficients"), "floatingCoefficients");
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "deformationField");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  if (coefficients.size() != floating.voxels() || field.size() != active.size())
    throw std::runtime_error("cubic_bspline_resample reference: input sizes do not match the variables");
  std::vector<double> warped(reference.voxels(), std::numeric_limits<double>::quiet_NaN());
  for (const std::int32_t i : active)
    if (i < 0 || static_cast<std::size_t>(i) >= warped.size())
      throw std::runtime_error("cubic_bspline_resample reference: active voxel " + std::to_string(i) +
                               " outside the reference image");
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const double pos[3] = {field[t].x, field[t].y, field[t].z};
      int pre[3];
      double weight[3][4];
      for (int a = 0; a < 3; ++a) {
        pre[a] = static_cast<int>(std::floor(pos[a]));
        bspline_basis(pos[a] - pre[a], weight[a]);
      }
      double value = 0;
      for (int c = 0; c < 4; ++c)
        for (int b = 0; b < 4; ++b)
          for (int a = 0; a < 4; ++a) {
            const int X = pre[0] - 1 + a, Y = pre[1] - 1 + b, Z = pre[2] - 1 + c;
            const bool inside = X >= 0 && X < floating.x && Y >= 0 && Y < floating.y && Z >= 0 && Z < floating.z;
            const double coefficient = inside ? coefficients[floating.index(X, Y, Z)] : padding;
            value += weight[0][a] * weight[1][b] * weight[2][c] * coefficient;
          }
      warped[static_cast<std::size_t>(active[t])] = value;
    }
  });
  return {{"warpedImage", std::move(warped)}};
}

}  // namespace

GI_REGISTER_GENERATOR("cubic_bspline_brain", generate_cubic_bspline_brain);
GI_REGISTER_REFERENCE("cubic_bspline_resample", cubic_bspline_reference);
