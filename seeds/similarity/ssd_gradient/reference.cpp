// CPU reference and input generator for similarity_ssd_gradient.
//
// Generator "similarity_ssd_gradient": the image pair of
// similarity_ssd_values (same variables: dim, amplitude, mask, floating) and
// the warped image's gradient at every active voxel - the analytic gradient
// of the trilinear interpolant that produced it, with respect to the
// sampling position (seeds/similarity/similarity_support.hpp).
// Derived variables: imageDimX/Y/Z, voxelNumber, activeVoxelNumber.
// Inputs: referenceImage, warpedImage (float, every voxel), warpedGradient
// (float4 per active voxel, w = 0), activeVoxels (int).
#include "fitness/workload/reference_registry.hpp"
#include "seeds/similarity/similarity_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_ssd_gradient(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("similarity_ssd_gradient", variables, similarity_option_names({}));
  const SimilarityImages images = similarity_images(similarity_options(args), seed);
  Workload w = image_pair_workload(images);
  w.inputs["warpedGradient"] = to_bytes(images.warped_gradient);
  return w;
}

// -2 (reference - warped) * gradient per active voxel; w = 0.
ReferenceOutputs ssd_gradient_reference(const Workload& w) {
  const ImagePair p = read_image_pair(w, "similarity_ssd_gradient");
  const auto gradient = from_bytes<Float4>(w.inputs.at("warpedGradient"), "warpedGradient");
  if (gradient.size() != p.active.size())
    throw std::runtime_error("similarity_ssd_gradient reference: warpedGradient has " +
                             std::to_string(gradient.size()) + " vectors, expected one per active voxel (" +
                             std::to_string(p.active.size()) + ")");
  std::vector<double> out(4 * p.active.size());
  for (std::size_t t = 0; t < p.active.size(); ++t) {
    const auto k = static_cast<std::size_t>(p.active[t]);
    const double common = -2.0 * (static_cast<double>(p.reference[k]) - static_cast<double>(p.warped[k]));
    out[4 * t + 0] = common * gradient[t].x;
    out[4 * t + 1] = common * gradient[t].y;
    out[4 * t + 2] = common * gradient[t].z;
    out[4 * t + 3] = 0.0;
  }
  return {{"ssdGradient", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("similarity_ssd_gradient", generate_ssd_gradient);
GI_REGISTER_REFERENCE("similarity_ssd_gradient", ssd_gradient_reference);
