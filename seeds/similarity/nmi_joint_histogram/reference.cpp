// CPU reference and input generator for similarity_nmi_joint_histogram.
//
// Generator "similarity_nmi_histogram": the image pair of
// similarity_ssd_values (variables dim, amplitude, mask, floating,
// skull_stripped; see seeds/similarity/similarity_support.hpp) and the
// histogram's binning:
//   bins: n                  reference bins (default 64, 5..512)
//   warped_bins: n           warped bins (default bins)
//   bin_margin: m            (default 1, -8 .. 2)
// The rescalings map each image's smallest and largest active intensity to
// bin positions m and bins - 1 - m: with the default every Parzen window lies
// inside; a negative margin puts the extremes' windows partly or wholly
// outside the histogram (the kernel skips those bins).
// Derived variables: imageDimX/Y/Z, voxelNumber, activeVoxelNumber,
// referenceBinNumber, warpedBinNumber, jointBinNumber, referenceScale,
// referenceOffset, warpedScale, warpedOffset (floats as the kernel sees them).
// Inputs: referenceImage, warpedImage, activeVoxels, jointHistogram (inout,
// all zeros).
#include "fitness/workload/reference_registry.hpp"
#include "seeds/similarity/similarity_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_nmi_histogram(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("similarity_nmi_histogram", variables,
                           similarity_option_names({"bins", "warped_bins", "bin_margin"}));
  const SimilarityImages images = similarity_images(similarity_options(args), seed);
  const NmiBinning binning = nmi_binning(args, images);
  Workload w = image_pair_workload(images);
  add_binning_variables(w, binning);
  w.inputs["jointHistogram"] = to_bytes(std::vector<float>(
      static_cast<std::size_t>(binning.reference_bins) * static_cast<std::size_t>(binning.warped_bins), 0.0f));
  return w;
}

// The initial contents plus every active voxel's 4 x 4 window weights.
ReferenceOutputs nmi_histogram_reference(const Workload& w) {
  const char* who = "similarity_nmi_joint_histogram";
  const ImagePair p = read_image_pair(w, who);
  const NmiBinning b = read_binning(w, who);
  const auto initial = from_bytes<float>(w.inputs.at("jointHistogram"), "jointHistogram");
  std::vector<double> histogram =
      joint_histogram(p.reference, p.warped, p.active, b.reference_bins, b.warped_bins, b.reference, b.warped);
  if (initial.size() != histogram.size())
    throw std::runtime_error(std::string(who) + " reference: jointHistogram has " + std::to_string(initial.size()) +
                             " bins, expected " + std::to_string(histogram.size()));
  for (std::size_t i = 0; i < histogram.size(); ++i) histogram[i] += initial[i];
  return {{"jointHistogram", std::move(histogram)}};
}

}  // namespace

GI_REGISTER_GENERATOR("similarity_nmi_histogram", generate_nmi_histogram);
GI_REGISTER_REFERENCE("similarity_nmi_joint_histogram", nmi_histogram_reference);
