// CPU reference and input generator for bspline_deformation_field.
//
// Generator "bspline_brain" - variables (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3)
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   amplitude: a             displacement size in voxels (default 3)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
// Derived variables: imageDimX/Y/Z, voxelNumber, spacingX/Y/Z (as the kernel's
// floats see them), controlPointDimX/Y/Z, controlPointNumber, activeVoxelNumber.
// Inputs: controlPointGrid (float4), activeVoxels (int).
#include <array>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

gi::fitness::Workload generate_bspline_brain(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("bspline_brain", variables, {"dim", "spacing", "amplitude", "mask"});
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  std::array<double, 3> spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  for (double& s : spacing) s = static_cast<float>(s);  // the kernel receives floats
  const double amplitude = args.number("amplitude", 3.0, 0.0, 50.0);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));

  const Dim3 grid = control_grid_dims(image, spacing);
  const std::vector<std::int32_t> active = active_voxels(image, shape, seed);
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
      {"activeVoxelNumber", static_cast<double>(active.size())},
  };
  w.inputs["controlPointGrid"] = to_bytes(smooth_control_grid(grid, amplitude, seed));
  w.inputs["activeVoxels"] = to_bytes(active);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "bspline_deformation_field"); }

ReferenceOutputs bspline_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const Dim3 grid{var(w, "controlPointDimX"), var(w, "controlPointDimY"), var(w, "controlPointDimZ")};
  const std::array<double, 3> spacing = {w.variables.at("spacingX"), w.variables.at("spacingY"),
                                         w.variables.at("spacingZ")};
  const auto points = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  return {{"deformationField", bspline_deformation(points, grid, image, spacing, active)}};
}

}  // namespace

GI_REGISTER_GENERATOR("bspline_brain", generate_bspline_brain);
GI_REGISTER_REFERENCE("bspline_deformation_field", bspline_reference);
