// CPU reference and input generator for cg_direction_update.
//
// Generator "cg_direction_state": a later conjugate-gradient iteration - the
// new gradient at the control points, the previous search direction h, and
// gamma, the Polak-Ribiere coefficient sum((gradient + g).gradient) /
// sum(g.g) of this state (g = -(previous gradient); computed in double and
// rounded to float, as the kernel receives it; 0 if sum(g.g) is 0).
// Variables (all optional): dim (default 217^3), spacing (default 5), mask
// (default brain), amplitude (typical gradient length, default 1), as for
// "cg_first_gradient".
// Derived variables: controlPointDimX/Y/Z, controlPointNumber, gamma.
// Inputs: gradient, conjugateH (float4, w = 0).
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/optimiser/optimiser_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_cg_direction_state(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("cg_direction_state", variables, cg_variable_names());
  const CgState state = cg_state(cg_options(args), seed);
  const std::array<double, 2> sums = polak_ribiere_sums(state.gradient, state.conjugate_g);
  Workload w = cg_workload(state.grid);
  w.variables["gamma"] = sums[0] > 0 ? static_cast<double>(static_cast<float>(sums[1] / sums[0])) : 0.0;
  w.inputs["gradient"] = to_bytes(state.gradient);
  w.inputs["conjugateH"] = to_bytes(state.conjugate_h);
  return w;
}

// g = -gradient; h = g + gamma h; the gradient array receives h; w = 0.
ReferenceOutputs cg_direction_update_reference(const Workload& w) {
  const int n = workload_int(w, "controlPointNumber", "cg_direction_update");
  const auto gradient = from_bytes<Float4>(w.inputs.at("gradient"), "gradient");
  const auto h = from_bytes<Float4>(w.inputs.at("conjugateH"), "conjugateH");
  if (gradient.size() != static_cast<std::size_t>(n) || h.size() != static_cast<std::size_t>(n))
    throw std::runtime_error("cg_direction_update reference: gradient and conjugateH must hold controlPointNumber (" +
                             std::to_string(n) + ") vectors");
  const auto it = w.variables.find("gamma");
  if (it == w.variables.end()) throw std::runtime_error("cg_direction_update reference: workload variable 'gamma' missing");
  const double gamma = it->second;
  std::vector<double> g_out(4 * gradient.size()), h_out(4 * gradient.size());
  for (std::size_t i = 0; i < gradient.size(); ++i) {
    const double g[3] = {-static_cast<double>(gradient[i].x), -static_cast<double>(gradient[i].y),
                         -static_cast<double>(gradient[i].z)};
    const double previous[3] = {h[i].x, h[i].y, h[i].z};
    for (std::size_t c = 0; c < 3; ++c) {
      g_out[4 * i + c] = g[c];
      h_out[4 * i + c] = g[c] + gamma * previous[c];
    }
    g_out[4 * i + 3] = 0.0;
    h_out[4 * i + 3] = 0.0;
  }
  std::vector<double> direction = h_out;
  return {{"gradient", std::move(direction)}, {"conjugateG", std::move(g_out)}, {"conjugateH", std::move(h_out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("cg_direction_state", generate_cg_direction_state);
GI_REGISTER_REFERENCE("cg_direction_update", cg_direction_update_reference);
