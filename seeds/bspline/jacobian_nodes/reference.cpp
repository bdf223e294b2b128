// CPU reference and input generator for bspline_jacobian_nodes (the
// generator also serves bspline_log_jacobian_penalty).
//
// Generator "jacobian_grid": a control grid of smooth random displacements
// for an image of `dim` voxels, optionally with local folds; redrawn until no
// interior node's determinant lies within 0.02 of zero (jacobian_support.hpp).
// Variables (all optional): dim, spacing, amplitude, folds (see
// jacobian_support.hpp). Derived variables: imageDimX/Y/Z, voxelNumber,
// spacingX/Y/Z, controlPointDimX/Y/Z, controlPointNumber, jacobianNodeNumber.
// Inputs: controlPointGrid (float4).
#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/jacobian_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_jacobian_grid(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("jacobian_grid", variables, {"dim", "spacing", "amplitude", "folds"});
  const jacobian::GridSetup setup = jacobian::read_grid_setup(args);
  Workload w;
  jacobian::add_grid_variables(w, setup);
  w.inputs["controlPointGrid"] = to_bytes(jacobian::jacobian_control_grid(
      setup.grid, setup.spacing, setup.amplitude, setup.folds, jacobian::kNodeMargin, seed));
  return w;
}

ReferenceOutputs jacobian_nodes_reference(const Workload& w) {
  const jacobian::GridSetup s = jacobian::grid_variables(w, "bspline_jacobian_nodes");
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  const std::vector<jacobian::Matrix> nodes = jacobian::node_jacobians(grid, s.grid, s.spacing);
  std::vector<double> matrices(9 * nodes.size()), determinants(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (std::size_t i = 0; i < 9; ++i) matrices[9 * n + i] = nodes[n][i];
    determinants[n] = jacobian::determinant(nodes[n]);
  }
  return {{"jacobianMatrices", std::move(matrices)}, {"jacobianDeterminants", std::move(determinants)}};
}

}  // namespace

GI_REGISTER_GENERATOR("jacobian_grid", generate_jacobian_grid);
GI_REGISTER_REFERENCE("bspline_jacobian_nodes", jacobian_nodes_reference);
