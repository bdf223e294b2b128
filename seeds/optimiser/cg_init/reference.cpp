// CPU reference and input generator for cg_init.
//
// Generator "cg_first_gradient": the objective's gradient at the control
// points in the first iteration (seeds/optimiser/optimiser_support.hpp:
// smooth, zero where no active voxel lies in a node's support). Variables
// (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3)
//   spacing: s or [x, y, z]  control point spacing in voxels (default 5)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   amplitude: a             typical gradient length (default 1)
// Derived variables: controlPointDimX/Y/Z, controlPointNumber.
// Inputs: gradient (float4, w = 0).
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/optimiser/optimiser_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_cg_first_gradient(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("cg_first_gradient", variables, cg_variable_names());
  const CgState state = cg_state(cg_options(args), seed);
  Workload w = cg_workload(state.grid);
  w.inputs["gradient"] = to_bytes(state.gradient);
  return w;
}

// g = h = -gradient; w = 0.
ReferenceOutputs cg_init_reference(const Workload& w) {
  const int n = workload_int(w, "controlPointNumber", "cg_init");
  const auto gradient = from_bytes<Float4>(w.inputs.at("gradient"), "gradient");
  if (gradient.size() != static_cast<std::size_t>(n))
    throw std::runtime_error("cg_init reference: gradient holds " + std::to_string(gradient.size()) +
                             " vectors, controlPointNumber is " + std::to_string(n));
  std::vector<double> g(4 * gradient.size());
  for (std::size_t i = 0; i < gradient.size(); ++i) {
    g[4 * i + 0] = -static_cast<double>(gradient[i].x);
    g[4 * i + 1] = -static_cast<double>(gradient[i].y);
    g[4 * i + 2] = -static_cast<double>(gradient[i].z);
    g[4 * i + 3] = 0.0;
  }
  std::vector<double> h = g;
  return {{"conjugateG", std::move(g)}, {"conjugateH", std::move(h)}};
}

}  // namespace

GI_REGISTER_GENERATOR("cg_first_gradient", generate_cg_first_gradient);
GI_REGISTER_REFERENCE("cg_init", cg_init_reference);
