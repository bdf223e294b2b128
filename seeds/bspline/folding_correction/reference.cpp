// CPU reference and input generator for bspline_folding_correction.
//
// Generator "bspline_folding": a smooth control grid plus local large
// displacements (Gaussian bumps one control point wide) that fold the
// transformation at a few percent of the nodes, and the approximate Jacobian
// determinant at every node computed from it in double (rounded to float;
// 1 on the grid's outer layer). Variables (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3): sets the grid size
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   amplitude: a             smooth displacement size in voxels (default 2)
//   fold_sites: f            bumps per 1000 control points (default 8)
//   fold_amplitude: A        bump size in control point spacings (default 4)
//   step: s                  gradient-ascent step (voxels^2: the determinant's
//                            gradient is per voxel; default 10, about 0.3
//                            voxels of mean move at spacing 5)
// Derived variables: controlPointDimX/Y/Z, controlPointNumber,
// interiorNodeNumber, spacingX/Y/Z, step (as the kernel's floats see them),
// foldedNodeNumber (nodes with determinant <= 0).
// Inputs: controlPointGrid (float4, w = 0), jacobianDeterminant (float).
#include <cmath>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/bending_support.hpp"

namespace {

using namespace gi::seeds;
using namespace gi::seeds::bending;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_folding(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("bspline_folding", variables,
                           {"dim", "spacing", "amplitude", "fold_sites", "fold_amplitude", "step"});
  GridWorkload g = generate_grid_workload(args, seed, 2.0);
  const double sites_per_1000 = args.number("fold_sites", 8.0, 0.0, 100.0);
  const double fold_amplitude = args.number("fold_amplitude", 4.0, 0.0, 10.0);
  const double step = static_cast<float>(args.number("step", 10.0, 0.0, 1000.0));
  const int sites = static_cast<int>(std::lround(sites_per_1000 * static_cast<double>(g.grid.voxels()) / 1000.0));
  add_fold_sites(g.points, g.grid, g.spacing, sites, fold_amplitude, seed);

  const auto jacobians = node_jacobians(displacements(g.points), g.grid, g.spacing);
  std::vector<float> det(jacobians.size());
  std::size_t folded = 0;
  for (std::size_t n = 0; n < det.size(); ++n) {
    det[n] = static_cast<float>(determinant(jacobians[n]));
    folded += det[n] <= 0.0f ? 1 : 0;
  }
  g.workload.variables["step"] = step;
  g.workload.variables["foldedNodeNumber"] = static_cast<double>(folded);
  g.workload.inputs["controlPointGrid"] = to_bytes(g.points);
  g.workload.inputs["jacobianDeterminant"] = to_bytes(det);
  return std::move(g.workload);
}

// The corrected grid: (x, y, z) moved, w copied.
ReferenceOutputs folding_reference(const Workload& w) {
  const char* who = "bspline_folding_correction";
  const GridVariables g = read_grid_variables(w, who);
  const auto step_it = w.variables.find("step");
  if (step_it == w.variables.end())
    throw std::runtime_error(std::string(who) + " reference: no variable 'step'");
  const auto points = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  const auto det = from_bytes<float>(w.inputs.at("jacobianDeterminant"), "jacobianDeterminant");
  const auto corrected = folding_correction(displacements(points), det, g.grid, g.spacing, step_it->second);
  std::vector<double> out(corrected.size() * 4);
  for (std::size_t m = 0; m < corrected.size(); ++m) {
    for (std::size_t comp = 0; comp < 3; ++comp) out[4 * m + comp] = corrected[m][comp];
    out[4 * m + 3] = points[m].w;
  }
  return {{"correctedGrid", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("bspline_folding", generate_folding);
GI_REGISTER_REFERENCE("bspline_folding_correction", folding_reference);
