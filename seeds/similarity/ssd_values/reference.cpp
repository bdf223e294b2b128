// CPU reference and input generator for similarity_ssd_values.
//
// Generator "similarity_ssd_values": the brain phantom's tissue image as the
// reference and a floating image warped through a smooth deformation (see
// seeds/similarity/similarity_support.hpp). Variables (all optional):
//   dim: [x, y, z] or n       image size (default 217^3)
//   amplitude: a              displacement size in voxels (default 2)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   floating: same | other | inverted   floating image (default other)
//   skull_stripped: true | false   both images 0 outside the brain (default false)
// Derived variables: imageDimX/Y/Z, voxelNumber, activeVoxelNumber.
// Inputs: referenceImage, warpedImage (float, every voxel), activeVoxels (int).
#include <cmath>
#include <limits>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/similarity/similarity_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_ssd_values(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("similarity_ssd_values", variables, similarity_option_names({}));
  return image_pair_workload(similarity_images(similarity_options(args), seed));
}

// (reference - warped)^2 at each active voxel's image index; other voxels NaN.
ReferenceOutputs ssd_values_reference(const Workload& w) {
  const ImagePair p = read_image_pair(w, "similarity_ssd_values");
  std::vector<double> out(p.dims.voxels(), std::numeric_limits<double>::quiet_NaN());
  for (const std::int32_t i : p.active) {
    const auto k = static_cast<std::size_t>(i);
    const double d = static_cast<double>(p.reference[k]) - static_cast<double>(p.warped[k]);
    out[k] = d * d;
  }
  return {{"ssdValues", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("similarity_ssd_values", generate_ssd_values);
GI_REGISTER_REFERENCE("similarity_ssd_values", ssd_values_reference);
