// CPU reference and input generator for sum_reduction.
//
// Generator "ssd_terms": the per-voxel SSD terms (W - R)^2 of a registration
// in progress (seeds/tools/tools_support.hpp: a T1-like image R and the same
// image warped by a residual smooth displacement, W), listed over the active
// voxels in index order, as the SSD measure sums them. The inout sum starts at 0.
// Variables (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   displacement: d          residual displacement in voxels (default 2)
//   integer: true | false    round every term to the nearest integer (default
//                            false). Their total must stay below 2^24
//                            (checked), so every float sum of them, in any
//                            order, is exact: a workload the seed gets exactly
// Derived variables: valueNumber (= active voxels), imageDimX/Y/Z.
// Inputs: values (float), sum (float, 1 element: 0).
#include <cmath>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_ssd_terms(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("ssd_terms", variables, {"dim", "mask", "displacement", "integer"});
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const double displacement = args.number("displacement", 2.0, 0.0, 20.0);
  const bool integer = args.flag("integer", false);

  const tools::SsdStep step = tools::ssd_step(image, shape, displacement, seed);
  std::vector<float> terms(step.active.size());
  for (std::size_t t = 0; t < terms.size(); ++t) {
    const auto i = static_cast<std::size_t>(step.active[t]);
    const double difference = static_cast<double>(step.warped[i]) - step.reference[i];
    terms[t] = static_cast<float>(integer ? std::nearbyint(difference * difference) : difference * difference);
  }
  if (integer) {
    // Every partial sum of non-negative integers below 2^24 is a float
    // integer, so no addition rounds, whatever the order.
    double total = 0;
    for (const float v : terms) total += v;
    if (total >= 16777216.0)
      args.fail("integer", "the integer terms sum to " + std::to_string(total) +
                               ", not below 2^24: use a smaller image, mask or displacement");
  }
  Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"valueNumber", static_cast<double>(terms.size())},
  };
  w.inputs["values"] = to_bytes(terms);
  w.inputs["sum"] = to_bytes(std::vector<float>{0.0f});
  return w;
}

// The initial sum plus every value, in double (its own rounding error is
// below 1e-9 of the sum for the sizes used here).
ReferenceOutputs sum_reduction_reference(const Workload& w) {
  const int count = workload_int(w, "valueNumber", "sum_reduction");
  const auto values = from_bytes<float>(w.inputs.at("values"), "values");
  const auto initial = from_bytes<float>(w.inputs.at("sum"), "sum");
  if (values.size() != static_cast<std::size_t>(count) || initial.size() != 1)
    throw std::runtime_error("sum_reduction reference: values holds " + std::to_string(values.size()) +
                             " floats (valueNumber is " + std::to_string(count) + "), sum " +
                             std::to_string(initial.size()) + " (expected 1)");
  double sum = initial[0];
  for (const float v : values) sum += v;
  return {{"sum", {sum}}};
}

}  // namespace

GI_REGISTER_GENERATOR("ssd_terms", generate_ssd_terms);
GI_REGISTER_REFERENCE("sum_reduction", sum_reduction_reference);
