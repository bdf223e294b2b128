// CPU reference and input generator for voxel_to_node_gradient.
//
// Generator "ssd_voxel_gradient": the voxel-based SSD gradient of a
// registration in progress (seeds/tools/tools_support.hpp: a T1-like image,
// the same image warped by a residual smooth displacement, 2 (W - R) grad W at
// the active voxels, 0 elsewhere), scaled to a chosen RMS length, junk in w.
// Variables (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3)
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   displacement: d          residual displacement in voxels (default 2)
//   amplitude: a             RMS gradient length over the active voxels (default 1)
// Derived variables: imageDimX/Y/Z, voxelNumber, spacingX/Y/Z (as the kernel's
// floats see them), controlPointDimX/Y/Z, controlPointNumber, activeVoxelNumber.
// Inputs: voxelGradient (float4).
#include <array>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_ssd_voxel_gradient(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("ssd_voxel_gradient", variables, {"dim", "spacing", "mask", "displacement", "amplitude"});
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  std::array<double, 3> spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  for (double& s : spacing) s = static_cast<float>(s);  // the kernel receives floats
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const double displacement = args.number("displacement", 2.0, 0.0, 20.0);
  const double amplitude = args.number("amplitude", 1.0, 0.0, 1e4);

  const Dim3 grid = control_grid_dims(image, spacing);
  const tools::SsdStep step = tools::ssd_step(image, shape, displacement, seed);
  Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"voxelNumber", static_cast<double>(image.voxels())},
      {"spacingX", spacing[0]},
      {"spacingY", spacing[1]},
      {"spacingZ", spacing[2]},
      {"controlPointDimX", grid.x},
      {"controlPointDimY", grid.y},
      {"controlPointDimZ", grid.z},
      {"controlPointNumber", static_cast<double>(grid.voxels())},
      {"activeVoxelNumber", static_cast<double>(step.active.size())},
  };
  w.inputs["voxelGradient"] = to_bytes(tools::scaled_gradient_with_junk(step, amplitude, seed));
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "voxel_to_node_gradient"); }

// The unnormalised B-spline-weighted sum over each node's support, in double.
ReferenceOutputs voxel_to_node_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const Dim3 grid{var(w, "controlPointDimX"), var(w, "controlPointDimY"), var(w, "controlPointDimZ")};
  const std::array<double, 3> spacing = {w.variables.at("spacingX"), w.variables.at("spacingY"),
                                         w.variables.at("spacingZ")};
  const auto gradient = from_bytes<Float4>(w.inputs.at("voxelGradient"), "voxelGradient");
  return {{"nodeGradient", tools::voxel_to_node(gradient, image, grid, spacing)}};
}

}  // namespace

GI_REGISTER_GENERATOR("ssd_voxel_gradient", generate_ssd_voxel_gradient);
GI_REGISTER_REFERENCE("voxel_to_node_gradient", voxel_to_node_reference);
