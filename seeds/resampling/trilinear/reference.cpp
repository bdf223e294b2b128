// CPU reference and input generator for trilinear_resample.
//
// Generator "trilinear_brain": a floating image resampled through the
// deformation of a registration in progress - the B-spline deformation of the
// reference image's active voxels (computed by the B-spline reference on a
// generated control grid), composed with a small rigid misalignment and
// mapped to the floating image's voxel grid (same field of view, possibly
// another resolution). Variables (all optional):
//   dim: [x, y, z] or n            reference image size (default 217^3)
//   floating_dim: [x, y, z] or n   floating image size (default = dim)
//   spacing: s or [x, y, z]        control point spacing in voxels (default 5)
//   amplitude: a                   displacement size in voxels (default 3)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   padding: p                     value outside the floating image (default 0)
//   zoom: z                        positions scaled by z about the image centre
//                                  (default 1). Above 1 the border voxels map
//                                  outside the floating image, on every face
//                                  and corner: with a full mask every border
//                                  branch of the kernel is taken, whatever
//                                  the seed (a registration-like brain mask
//                                  never leaves the image).
// Derived variables: referenceDimX/Y/Z, referenceVoxelNumber,
// floatingDimX/Y/Z, floatingVoxelNumber, activeVoxelNumber, paddingValue.
// Inputs: floatingImage (float), deformationField (float4), activeVoxels (int).
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_trilinear_brain(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("trilinear_brain", variables,
                           {"dim", "floating_dim", "spacing", "amplitude", "mask", "padding", "zoom"});
  const Dim3 reference = args.dims("dim", Dim3{217, 217, 217});
  const Dim3 floating = args.dims("floating_dim", reference);
  const std::array<double, 3> spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  const double amplitude = args.number("amplitude", 3.0, 0.0, 50.0);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const double padding = static_cast<float>(args.number("padding", 0.0, -1e6, 1e6));
  const double zoom = args.number("zoom", 1.0, 0.25, 4.0);

  const std::vector<std::int32_t> active = active_voxels(reference, shape, seed);
  const Dim3 grid = control_grid_dims(reference, spacing);
  const std::vector<double> deformation =
      bspline_deformation(smooth_control_grid(grid, amplitude, seed), grid, reference, spacing, active);

  // A small rigid misalignment about the image centre: up to 3 degrees about
  // z and 2 voxels of translation.
  Rng rng(seed, kStreamAffine);
  const double angle = rng.uniform(-3, 3) * 3.141592653589793 / 180.0;
  const double t[3] = {rng.uniform(-2, 2), rng.uniform(-2, 2), rng.uniform(-2, 2)};
  const double c[3] = {(reference.x - 1) / 2.0, (reference.y - 1) / 2.0, (reference.z - 1) / 2.0};
  const double cs = std::cos(angle), sn = std::sin(angle);
  // Reference voxel -> floating voxel: voxel centres of the same field of view.
  const double scale[3] = {static_cast<double>(floating.x) / reference.x,
                           static_cast<double>(floating.y) / reference.y,
                           static_cast<double>(floating.z) / reference.z};
  std::vector<Float4> field(active.size());
  for (std::size_t i = 0; i < active.size(); ++i) {
    const double p[3] = {deformation[4 * i] - c[0], deformation[4 * i + 1] - c[1], deformation[4 * i + 2] - c[2]};
    double q[3] = {cs * p[0] - sn * p[1] + c[0] + t[0], sn * p[0] + cs * p[1] + c[1] + t[1], p[2] + c[2] + t[2]};
    // Only when asked: the default keeps the positions bit for bit.
    if (zoom != 1.0)
      for (int a = 0; a < 3; ++a) q[a] = c[a] + zoom * (q[a] - c[a]);
    field[i].x = static_cast<float>((q[0] + 0.5) * scale[0] - 0.5);
    field[i].y = static_cast<float>((q[1] + 0.5) * scale[1] - 0.5);
    field[i].z = static_cast<float>((q[2] + 0.5) * scale[2] - 0.5);
    field[i].w = 0.0f;
  }

  Workload w;
  w.variables = {
      {"referenceDimX", reference.x},
      {"referenceDimY", reference.y},
      {"referenceDimZ", reference.z},
      {"referenceVoxelNumber", static_cast<double>(reference.voxels())},
      {"floatingDimX", floating.x},
      {"floatingDimY", floating.y},
      {"floatingDimZ", floating.z},
      {"floatingVoxelNumber", static_cast<double>(floating.voxels())},
      {"activeVoxelNumber", static_cast<double>(active.size())},
      {"paddingValue", padding},
  };
  w.inputs["floatingImage"] = to_bytes(tissue_image(floating, seed));
  w.inputs["deformationField"] = to_bytes(field);
  w.inputs["activeVoxels"] = to_bytes(active);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "trilinear_resample"); }

// Each of the 8 corners outside the floating image contributes the padding
// value with its trilinear weight; non-active voxels are not written (NaN).
ReferenceOutputs trilinear_reference(const Workload& w) {
  const Dim3 floating{var(w, "floatingDimX"), var(w, "floatingDimY"), var(w, "floatingDimZ")};
  const Dim3 reference{var(w, "referenceDimX"), var(w, "referenceDimY"), var(w, "referenceDimZ")};
  const double padding = w.variables.at("paddingValue");
  const auto image = from_bytes<float>(w.inputs.at("floatingImage"), "floatingImage");
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "deformationField");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  if (image.size() != floating.voxels() || field.size() != active.size())
    throw std::runtime_error("trilinear_resample reference: input sizes do not match the variables");
  std::vector<double> warped(reference.voxels(), std::numeric_limits<double>::quiet_NaN());
  for (const std::int32_t i : active)
    if (i < 0 || static_cast<std::size_t>(i) >= warped.size())
      throw std::runtime_error("trilinear_resample reference: active voxel " + std::to_string(i) +
                               " outside the reference image");
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const double pos[3] = {field[t].x, field[t].y, field[t].z};
      int pre[3];
      double weight[3][2];
      for (int a = 0; a < 3; ++a) {
        pre[a] = static_cast<int>(std::floor(pos[a]));
        const double rel = pos[a] - pre[a];
        weight[a][0] = 1.0 - rel;
        weight[a][1] = rel;
      }
      double value = 0;
      for (int c = 0; c < 2; ++c)
        for (int b = 0; b < 2; ++b)
          for (int a = 0; a < 2; ++a) {
            const int X = pre[0] + a, Y = pre[1] + b, Z = pre[2] + c;
            const bool inside = X >= 0 && X < floating.x && Y >= 0 && Y < floating.y && Z >= 0 && Z < floating.z;
            const double intensity = inside ? image[floating.index(X, Y, Z)] : padding;
            value += weight[0][a] * weight[1][b] * weight[2][c] * intensity;
          }
      warped[static_cast<std::size_t>(active[t])] = value;
    }
  });
  return {{"warpedImage", std::move(warped)}};
}

}  // namespace

GI_REGISTER_GENERATOR("trilinear_brain", generate_trilinear_brain);
GI_REGISTER_REFERENCE("trilinear_resample", trilinear_reference);
