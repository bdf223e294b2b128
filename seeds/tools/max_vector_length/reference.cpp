// CPU reference and input generator for max_vector_length.
//
// Generator "gradient_length_field": a gradient of a registration in progress
// (seeds/tools/tools_support.hpp), either the voxel-based SSD gradient itself
// or that gradient taken to the B-spline nodes (the voxel-to-node reference,
// in double, rounded to float); junk in w. The inout maxLength starts at 0.
// Variables (all optional):
//   field: voxel | node       which gradient (default voxel)
//   dim, spacing, mask, displacement, amplitude   as generator "ssd_voxel_gradient"
//                             (spacing only matters for field = node)
// Derived variables: vectorNumber (voxels or nodes), imageDimX/Y/Z.
// Inputs: field (float4), maxLength (float, 1 element: 0).
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_gradient_length_field(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("gradient_length_field", variables,
                           {"field", "dim", "spacing", "mask", "displacement", "amplitude"});
  const bool nodes = args.choice("field", "voxel", {"voxel", "node"}) == "node";
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  std::array<double, 3> spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  for (double& s : spacing) s = static_cast<float>(s);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const double displacement = args.number("displacement", 2.0, 0.0, 20.0);
  const double amplitude = args.number("amplitude", 1.0, 0.0, 1e4);

  const tools::SsdStep step = tools::ssd_step(image, shape, displacement, seed);
  std::vector<Float4> field = tools::scaled_gradient_with_junk(step, amplitude, seed);
  if (nodes) {
    const Dim3 grid = control_grid_dims(image, spacing);
    field = tools::nodes_with_junk(tools::voxel_to_node(field, image, grid, spacing), seed);
  }
  Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"vectorNumber", static_cast<double>(field.size())},
  };
  w.inputs["field"] = to_bytes(field);
  w.inputs["maxLength"] = to_bytes(std::vector<float>{0.0f});
  return w;
}

// The largest of the initial maxLength and the lengths of (x, y, z), in double.
ReferenceOutputs max_vector_length_reference(const Workload& w) {
  const int count = workload_int(w, "vectorNumber", "max_vector_length");
  const auto field = from_bytes<Float4>(w.inputs.at("field"), "field");
  const auto initial = from_bytes<float>(w.inputs.at("maxLength"), "maxLength");
  if (field.size() != static_cast<std::size_t>(count) || initial.size() != 1)
    throw std::runtime_error("max_vector_length reference: field holds " + std::to_string(field.size()) +
                             " vectors (vectorNumber is " + std::to_string(count) + "), maxLength " +
                             std::to_string(initial.size()) + " (expected 1)");
  double largest = initial[0];
  for (const Float4& v : field)
    largest = std::max(largest, std::sqrt(static_cast<double>(v.x) * v.x + static_cast<double>(v.y) * v.y +
                                          static_cast<double>(v.z) * v.z));
  return {{"maxLength", {largest}}};
}

}  // namespace

GI_REGISTER_GENERATOR("gradient_length_field", generate_gradient_length_field);
GI_REGISTER_REFERENCE("max_vector_length", max_vector_length_reference);
