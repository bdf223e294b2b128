// CPU reference and input generator for cg_dot_products.
//
// Generator "cg_gradient_pair": a later conjugate-gradient iteration - the
// new gradient at the control points and g = -(previous gradient), the two
// correlated as consecutive gradients are (seeds/optimiser/optimiser_support.hpp),
// and the sums buffer zeroed. Variables (all optional): dim (default 217^3),
// spacing (default 5), mask (default brain), amplitude (typical gradient
// length, default 1), as for "cg_first_gradient"; and
//   integer: true | false   round every x, y, z of both arrays to the nearest
//                           integer (default false). The generator checks that
//                           the terms' absolute values sum to less than 2^24,
//                           so every float product and sum the kernel forms,
//                           in any order of the atomics, is exact.
// Derived variables: controlPointDimX/Y/Z, controlPointNumber.
// Inputs: gradient, conjugateG (float4, w = 0), sums (2 floats, zero).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/optimiser/optimiser_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

// Rounds x, y, z (w stays 0).
void round_to_integers(std::vector<Float4>& field) {
  for (Float4& v : field) {
    v.x = std::nearbyint(v.x);
    v.y = std::nearbyint(v.y);
    v.z = std::nearbyint(v.z);
  }
}

Workload generate_cg_gradient_pair(const nlohmann::json& variables, std::uint64_t seed) {
  std::vector<std::string> names = cg_variable_names();
  names.emplace_back("integer");
  const GeneratorArgs args("cg_gradient_pair", variables, names);
  CgState state = cg_state(cg_options(args), seed);
  if (args.flag("integer", false)) {
    round_to_integers(state.gradient);
    round_to_integers(state.conjugate_g);
    // Below 2^24 every integer is a float and no partial sum rounds.
    double bound[2] = {0, 0};
    for (std::size_t i = 0; i < state.gradient.size(); ++i) {
      const Float4& d = state.gradient[i];
      const Float4& g = state.conjugate_g[i];
      bound[0] += static_cast<double>(g.x) * g.x + static_cast<double>(g.y) * g.y + static_cast<double>(g.z) * g.z;
      bound[1] += std::fabs((static_cast<double>(d.x) + g.x) * d.x) +
                  std::fabs((static_cast<double>(d.y) + g.y) * d.y) +
                  std::fabs((static_cast<double>(d.z) + g.z) * d.z);
    }
    if (std::max(bound[0], bound[1]) >= 16777216.0)
      args.fail("integer", "the terms' absolute values sum to " + std::to_string(std::max(bound[0], bound[1])) +
                               ", not below 2^24: use a smaller grid or amplitude");
  }
  Workload w = cg_workload(state.grid);
  w.inputs["gradient"] = to_bytes(state.gradient);
  w.inputs["conjugateG"] = to_bytes(state.conjugate_g);
  w.inputs["sums"] = to_bytes(std::vector<float>{0.0f, 0.0f});
  return w;
}

// The sums in double, added to the initial contents of sums.
ReferenceOutputs cg_dot_products_reference(const Workload& w) {
  const int n = workload_int(w, "controlPointNumber", "cg_dot_products");
  const auto gradient = from_bytes<Float4>(w.inputs.at("gradient"), "gradient");
  const auto g = from_bytes<Float4>(w.inputs.at("conjugateG"), "conjugateG");
  const auto initial = from_bytes<float>(w.inputs.at("sums"), "sums");
  if (gradient.size() != static_cast<std::size_t>(n) || g.size() != static_cast<std::size_t>(n) || initial.size() != 2)
    throw std::runtime_error("cg_dot_products reference: gradient and conjugateG must hold controlPointNumber (" +
                             std::to_string(n) + ") vectors and sums 2 floats");
  const std::array<double, 2> sums = polak_ribiere_sums(gradient, g);
  return {{"sums", {initial[0] + sums[0], initial[1] + sums[1]}}};
}

}  // namespace

GI_REGISTER_GENERATOR("cg_gradient_pair", generate_cg_gradient_pair);
GI_REGISTER_REFERENCE("cg_dot_products", cg_dot_products_reference);
