// CPU reference and input generator for cg_dot_products.
//
// Generator "cg_gradient_pair": a later conjugate-gradient iteration - the
// new gradient at the control points and g = -(previous gradient), the two
// correlated as consecutive gradients are (seeds/optimiser/optimiser_support.hpp),
// and the sums buffer zeroed. Variables (all optional): dim (default 217^3),
// spacing (default 5), mask (default brain), amplitude (typical gradient
// length, default 1), as for "cg_first_gradient".
// Derived variables: controlPointDimX/Y/Z, controlPointNumber.
// Inputs: gradient, conjugateG (float4, w = 0), sums (2 floats, zero).
#include <stdexcept>

#include "fitness/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/optimiser/optimiser_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_cg_gradient_pair(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("cg_gradient_pair", variables, cg_variable_names());
  const CgState state = cg_state(cg_options(args), seed);
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
