// CPU reference for bspline_bending_energy. Its workloads come from the
// generator "bspline_bending_grid" (seeds/bspline/second_derivatives/
// reference.cpp): a smooth control grid (controlPointGrid, float4) sized by
// dim and spacing, with amplitude in voxels.
#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/bending_support.hpp"

namespace {

using namespace gi::seeds;
using namespace gi::seeds::bending;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

// One value per node: the bending energy of its second derivatives; zero on the border.
ReferenceOutputs bending_energy_reference(const Workload& w) {
  const GridVariables g = read_grid_variables(w, "bspline_bending_energy");
  const auto points = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  return {{"bendingEnergy", node_bending_energy(displacements(points), g.grid, g.spacing)}};
}

}  // namespace

GI_REGISTER_REFERENCE("bspline_bending_energy", bending_energy_reference);
