// CPU reference for bspline_log_jacobian_penalty: (ln det J)^2 of the
// approximate Jacobian at every interior node, kFoldPenalty (1000) where
// det <= 0. Its workloads come from the generator "jacobian_grid"
// (seeds/bspline/jacobian_nodes/reference.cpp).
#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/jacobian_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

ReferenceOutputs log_jacobian_penalty_reference(const Workload& w) {
  const jacobian::GridSetup s = jacobian::grid_variables(w, "bspline_log_jacobian_penalty");
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  const std::vector<jacobian::Matrix> nodes = jacobian::node_jacobians(grid, s.grid, s.spacing);
  std::vector<double> penalty(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) penalty[n] = jacobian::log_jacobian_penalty(nodes[n]);
  return {{"penalty", std::move(penalty)}};
}

}  // namespace

GI_REGISTER_REFERENCE("bspline_log_jacobian_penalty", log_jacobian_penalty_reference);
