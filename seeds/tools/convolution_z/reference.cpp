// CPU reference for convolution_z. Its inputs come from the generator
// "convolution_field" of seeds/tools/convolution_x (a smooth gradient-like
// float4 field with junk in w, and a normalised Gaussian kernel; variables
// dim, radius, sigma, amplitude), whose variables fit this kernel unchanged.
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

int var(const Workload& w, const char* name) { return workload_int(w, name, "convolution_z"); }

// Taps outside the image are dropped and the sum renormalised by the weights
// actually used; a zero weight sum gives 0. Output w is 0.
ReferenceOutputs convolution_z_reference(const Workload& w) {
  const Dim3 dims{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const int radius = var(w, "kernelRadius");
  const auto input = from_bytes<Float4>(w.inputs.at("input"), "input");
  const auto weights = from_bytes<float>(w.inputs.at("kernelWeights"), "kernelWeights");
  if (weights.size() != static_cast<std::size_t>(2 * radius + 1))
    throw std::runtime_error("convolution_z reference: kernelWeights holds " + std::to_string(weights.size()) +
                             " weights, kernelRadius " + std::to_string(radius) + " needs " +
                             std::to_string(2 * radius + 1));
  return {{"output", tools::convolve_axis(input, dims, weights, 2, "convolution_z")}};
}

}  // namespace

GI_REGISTER_REFERENCE("convolution_z", convolution_z_reference);
