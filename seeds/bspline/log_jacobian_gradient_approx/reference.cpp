// CPU reference and input generator for bspline_log_jacobian_gradient_approx.
//
// Generator "jacobian_node_matrices": the approximate node Jacobians of a
// control grid drawn as by "jacobian_grid" (same variables: dim, spacing,
// amplitude, folds; no node determinant within 0.02 of zero), computed in
// double by the CPU reference of bspline_jacobian_nodes and stored as floats.
// Derived variables as "jacobian_grid". Inputs: jacobianMatrices (float,
// 9 per interior node).
//
// Reference: the gradient of sum over nodes of (ln det J_n)^2 with respect to
// every control point, from the float matrices the kernel reads.
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/jacobian_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_jacobian_node_matrices(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("jacobian_node_matrices", variables, {"dim", "spacing", "amplitude", "folds"});
  const jacobian::GridSetup setup = jacobian::read_grid_setup(args);
  const std::vector<Float4> grid = jacobian::jacobian_control_grid(setup.grid, setup.spacing, setup.amplitude,
                                                                   setup.folds, jacobian::kNodeMargin, seed);
  const std::vector<jacobian::Matrix> nodes = jacobian::node_jacobians(grid, setup.grid, setup.spacing);
  std::vector<float> matrices(9 * nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n)
    for (std::size_t i = 0; i < 9; ++i) matrices[9 * n + i] = static_cast<float>(nodes[n][i]);
  Workload w;
  jacobian::add_grid_variables(w, setup);
  w.inputs["jacobianMatrices"] = to_bytes(matrices);
  return w;
}

ReferenceOutputs gradient_approx_reference(const Workload& w) {
  const jacobian::GridSetup s = jacobian::grid_variables(w, "bspline_log_jacobian_gradient_approx");
  const auto values = from_bytes<float>(w.inputs.at("jacobianMatrices"), "jacobianMatrices");
  if (values.size() != 9 * jacobian::interior_nodes(s.grid).voxels())
    throw std::runtime_error("bspline_log_jacobian_gradient_approx reference: jacobianMatrices holds " +
                             std::to_string(values.size()) + " floats, expected 9 per interior node");
  std::vector<jacobian::Matrix> nodes(values.size() / 9);
  for (std::size_t n = 0; n < nodes.size(); ++n)
    for (std::size_t i = 0; i < 9; ++i) nodes[n][i] = values[9 * n + i];
  return {{"gradient", jacobian::node_penalty_gradient(nodes, s.grid, s.spacing)}};
}

}  // namespace

GI_REGISTER_GENERATOR("jacobian_node_matrices", generate_jacobian_node_matrices);
GI_REGISTER_REFERENCE("bspline_log_jacobian_gradient_approx", gradient_approx_reference);
