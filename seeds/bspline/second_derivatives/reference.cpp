// CPU reference and input generator for bspline_second_derivatives (and the
// generator of bspline_bending_energy, which reads the same control grid).
//
// Generator "bspline_bending_grid" - variables (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3): sets the grid size
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   amplitude: a             displacement size in voxels (default 3)
// Derived variables: controlPointDimX/Y/Z, controlPointNumber,
// interiorNodeNumber, spacingX/Y/Z (as the kernel's floats see them).
// Inputs: controlPointGrid (float4, w = 0): smooth random displacements.
#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/bending_support.hpp"

namespace {

using namespace gi::seeds;
using namespace gi::seeds::bending;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_bending_grid(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("bspline_bending_grid", variables, {"dim", "spacing", "amplitude"});
  GridWorkload g = generate_grid_workload(args, seed);
  g.workload.inputs["controlPointGrid"] = to_bytes(g.points);
  return std::move(g.workload);
}

// Six float4 per node (xx, yy, zz, xy, yz, xz; w = 0); zero on the border.
ReferenceOutputs second_derivatives_reference(const Workload& w) {
  const GridVariables g = read_grid_variables(w, "bspline_second_derivatives");
  const auto points = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  const auto second = node_second_derivatives(displacements(points), g.grid, g.spacing);
  std::vector<double> out(second.size() * 6 * 4);
  for (std::size_t n = 0; n < second.size(); ++n)
    for (std::size_t d = 0; d < 6; ++d)
      for (std::size_t comp = 0; comp < 3; ++comp) out[(6 * n + d) * 4 + comp] = second[n][d][comp];
  return {{"secondDerivatives", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("bspline_bending_grid", generate_bending_grid);
GI_REGISTER_REFERENCE("bspline_second_derivatives", second_derivatives_reference);
