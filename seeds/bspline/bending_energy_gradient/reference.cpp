// CPU reference and input generator for bspline_bending_energy_gradient.
//
// Generator "bspline_bending_gradient_field": the second-derivative field of
// a smooth control grid, as bspline_second_derivatives produces it (computed
// here by its CPU reference in double and rounded to float). Variables (all
// optional), as for "bspline_bending_grid":
//   dim: [x, y, z] or n      image size in voxels (default 217^3): sets the grid size
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   amplitude: a             displacement size in voxels (default 3)
// Derived variables: controlPointDimX/Y/Z, controlPointNumber,
// interiorNodeNumber, spacingX/Y/Z (as the kernel's floats see them).
// Inputs: secondDerivatives (float4, 6 per node: xx, yy, zz, xy, yz, xz;
// w = 0; zero on the grid's outer layer).
#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/bending_support.hpp"

namespace {

using namespace gi::seeds;
using namespace gi::seeds::bending;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_gradient_field(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("bspline_bending_gradient_field", variables, {"dim", "spacing", "amplitude"});
  GridWorkload g = generate_grid_workload(args, seed);
  const auto second = node_second_derivatives(displacements(g.points), g.grid, g.spacing);
  std::vector<Float4> field(second.size() * 6);
  for (std::size_t n = 0; n < second.size(); ++n)
    for (std::size_t d = 0; d < 6; ++d)
      field[6 * n + d] = Float4{static_cast<float>(second[n][d][0]), static_cast<float>(second[n][d][1]),
                                static_cast<float>(second[n][d][2]), 0.0f};
  g.workload.inputs["secondDerivatives"] = to_bytes(field);
  return std::move(g.workload);
}

// d(total bending energy)/d(control point), (x, y, z, 0) per control point.
ReferenceOutputs gradient_reference(const Workload& w) {
  const GridVariables g = read_grid_variables(w, "bspline_bending_energy_gradient");
  const auto field = from_bytes<Float4>(w.inputs.at("secondDerivatives"), "secondDerivatives");
  if (field.size() != 6 * g.grid.voxels())
    throw std::runtime_error("bspline_bending_energy_gradient reference: secondDerivatives holds " +
                             std::to_string(field.size()) + " float4, expected 6 per node (" +
                             std::to_string(6 * g.grid.voxels()) + ")");
  std::vector<SecondDerivatives> second(g.grid.voxels());
  for (std::size_t n = 0; n < second.size(); ++n)
    for (std::size_t d = 0; d < 6; ++d) second[n][d] = {field[6 * n + d].x, field[6 * n + d].y, field[6 * n + d].z};
  const auto gradient = bending_energy_gradient(second, g.grid, g.spacing);
  std::vector<double> out(gradient.size() * 4);
  for (std::size_t m = 0; m < gradient.size(); ++m)
    for (std::size_t comp = 0; comp < 3; ++comp) out[4 * m + comp] = gradient[m][comp];
  return {{"gradient", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("bspline_bending_gradient_field", generate_gradient_field);
GI_REGISTER_REFERENCE("bspline_bending_energy_gradient", gradient_reference);
