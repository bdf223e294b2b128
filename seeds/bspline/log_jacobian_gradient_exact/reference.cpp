// CPU reference and input generator for bspline_log_jacobian_gradient_exact.
//
// Generator "jacobian_voxel_terms": a control grid drawn as by
// "jacobian_grid" (variables dim, spacing, amplitude, folds; no margin
// condition: folded voxels simply get zero terms) and an active mask
// (variable mask: brain | full | sphere | slab | shell, default brain); the
// exact Jacobian J_v of every active voxel in double (the CPU reference of
// bspline_jacobian_voxels), from which the per-voxel terms
// 2 ln(det J_v) J_v^{-T} are stored as floats. Derived variables as
// "jacobian_grid" plus activeVoxelNumber. Inputs: voxelTerms (float, 9 per
// active voxel), voxelToActive (int per image voxel, -1 if not active).
//
// Reference: the gather of the float terms with the basis-derivative
// weights, in double, per control point.
#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/jacobian_support.hpp"
#include "seeds/common/brain_phantom.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_jacobian_voxel_terms(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("jacobian_voxel_terms", variables, {"dim", "spacing", "amplitude", "folds", "mask"});
  const jacobian::GridSetup setup = jacobian::read_grid_setup(args);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const std::vector<Float4> grid =
      jacobian::jacobian_control_grid(setup.grid, setup.spacing, setup.amplitude, setup.folds, 0.0, seed);
  const std::vector<std::int32_t> active = active_voxels(setup.image, shape, seed);
  const std::vector<jacobian::Matrix> voxels = jacobian::voxel_jacobians(grid, setup.grid, setup.image, setup.spacing, active);
  std::vector<float> terms(9 * voxels.size());
  parallel_for(voxels.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const jacobian::Matrix term = jacobian::log_jacobian_term(voxels[t]);
      for (std::size_t i = 0; i < 9; ++i) terms[9 * t + i] = static_cast<float>(term[i]);
    }
  });
  std::vector<std::int32_t> voxel_to_active(setup.image.voxels(), -1);
  for (std::size_t t = 0; t < active.size(); ++t) voxel_to_active[static_cast<std::size_t>(active[t])] = static_cast<std::int32_t>(t);
  Workload w;
  jacobian::add_grid_variables(w, setup);
  w.variables["activeVoxelNumber"] = static_cast<double>(active.size());
  w.inputs["voxelTerms"] = to_bytes(terms);
  w.inputs["voxelToActive"] = to_bytes(voxel_to_active);
  return w;
}

ReferenceOutputs gradient_exact_reference(const Workload& w) {
  const jacobian::GridSetup s = jacobian::grid_variables(w, "bspline_log_jacobian_gradient_exact");
  const auto terms = from_bytes<float>(w.inputs.at("voxelTerms"), "voxelTerms");
  const auto map = from_bytes<std::int32_t>(w.inputs.at("voxelToActive"), "voxelToActive");
  return {{"gradient", jacobian::voxel_penalty_gradient(terms, map, s.image, s.grid, s.spacing)}};
}

}  // namespace

GI_REGISTER_GENERATOR("jacobian_voxel_terms", generate_jacobian_voxel_terms);
GI_REGISTER_REFERENCE("bspline_log_jacobian_gradient_exact", gradient_exact_reference);
