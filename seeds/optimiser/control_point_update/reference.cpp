// CPU reference and input generator for control_point_update.
//
// Generator "cg_line_search_step": one step of the line search - the best
// control grid so far (smooth displacements of about `displacement` voxels,
// as the B-spline seeds' grids), the search direction h = g + gamma h of a
// conjugate-gradient state (seeds/optimiser/optimiser_support.hpp) scaled
// so that its longest vector has length 1 (as the optimiser normalises it),
// and the step alpha. Variables (all optional): dim (default 217^3),
// spacing (default 5), mask (default brain), amplitude (gradient size,
// default 1; irrelevant after the normalisation, kept for symmetry),
//   displacement: d    size of the best grid's displacements (default 3)
//   step: a            alpha in voxels (default: drawn per seed in
//                      [0.05, 1] times the largest spacing)
// Derived variables: controlPointDimX/Y/Z, controlPointNumber, alpha (a float).
// Inputs: bestControlPointGrid, searchDirection (float4, w = 0).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"
#include "seeds/optimiser/optimiser_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_cg_line_search_step(const nlohmann::json& variables, std::uint64_t seed) {
  std::vector<std::string> names = cg_variable_names();
  names.emplace_back("displacement");
  names.emplace_back("step");
  const GeneratorArgs args("cg_line_search_step", variables, names);
  const CgOptions options = cg_options(args);
  const double displacement = args.number("displacement", 3.0, 0.0, 50.0);
  Rng rng(seed, kStreamField * 16 + 10);
  const double largest_spacing = *std::max_element(options.spacing.begin(), options.spacing.end());
  const double step = args.number("step", rng.uniform(0.05, 1.0) * largest_spacing, 0.0, 1000.0);

  const CgState state = cg_state(options, seed);
  const std::array<double, 2> sums = polak_ribiere_sums(state.gradient, state.conjugate_g);
  const double gamma = sums[0] > 0 ? sums[1] / sums[0] : 0.0;
  std::vector<double> h(3 * state.gradient.size());
  double longest = 0;
  for (std::size_t i = 0; i < state.gradient.size(); ++i) {
    h[3 * i + 0] = -static_cast<double>(state.gradient[i].x) + gamma * state.conjugate_h[i].x;
    h[3 * i + 1] = -static_cast<double>(state.gradient[i].y) + gamma * state.conjugate_h[i].y;
    h[3 * i + 2] = -static_cast<double>(state.gradient[i].z) + gamma * state.conjugate_h[i].z;
    longest = std::max(longest, std::sqrt(h[3 * i] * h[3 * i] + h[3 * i + 1] * h[3 * i + 1] + h[3 * i + 2] * h[3 * i + 2]));
  }
  std::vector<Float4> direction(state.gradient.size());
  for (std::size_t i = 0; i < direction.size() && longest > 0; ++i) {
    direction[i].x = static_cast<float>(h[3 * i + 0] / longest);
    direction[i].y = static_cast<float>(h[3 * i + 1] / longest);
    direction[i].z = static_cast<float>(h[3 * i + 2] / longest);
  }
  Workload w = cg_workload(state.grid);
  w.variables["alpha"] = static_cast<double>(static_cast<float>(step));
  w.inputs["bestControlPointGrid"] =
      to_bytes(smooth_control_grid(state.grid, displacement, hash3(seed, kStreamControlGrid, 0x62657374)));
  w.inputs["searchDirection"] = to_bytes(direction);
  return w;
}

// best + alpha * direction; w = 0.
ReferenceOutputs control_point_update_reference(const Workload& w) {
  const int n = workload_int(w, "controlPointNumber", "control_point_update");
  const auto best = from_bytes<Float4>(w.inputs.at("bestControlPointGrid"), "bestControlPointGrid");
  const auto direction = from_bytes<Float4>(w.inputs.at("searchDirection"), "searchDirection");
  if (best.size() != static_cast<std::size_t>(n) || direction.size() != static_cast<std::size_t>(n))
    throw std::runtime_error("control_point_update reference: bestControlPointGrid and searchDirection must hold "
                             "controlPointNumber (" + std::to_string(n) + ") vectors");
  const auto it = w.variables.find("alpha");
  if (it == w.variables.end()) throw std::runtime_error("control_point_update reference: workload variable 'alpha' missing");
  const double alpha = it->second;
  std::vector<double> out(4 * best.size());
  for (std::size_t i = 0; i < best.size(); ++i) {
    out[4 * i + 0] = best[i].x + alpha * direction[i].x;
    out[4 * i + 1] = best[i].y + alpha * direction[i].y;
    out[4 * i + 2] = best[i].z + alpha * direction[i].z;
    out[4 * i + 3] = 0.0;
  }
  return {{"controlPointGrid", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("cg_line_search_step", generate_cg_line_search_step);
GI_REGISTER_REFERENCE("control_point_update", control_point_update_reference);
