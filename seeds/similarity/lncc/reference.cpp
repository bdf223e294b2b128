// CPU reference and input generator for similarity_lncc.
//
// Generator "similarity_lncc": the image pair of similarity_ssd_values
// (variables dim, amplitude, mask, floating; see
// seeds/similarity/similarity_support.hpp) and the window:
//   radius: r                 window half-width in voxels (default 2: 5^3 voxels)
// Derived variables: imageDimX/Y/Z, voxelNumber, activeVoxelNumber, windowRadius.
// Inputs: referenceImage, warpedImage (float, every voxel), activeVoxels (int).
#include <limits>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/similarity/similarity_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_lncc(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("similarity_lncc", variables, similarity_option_names({"radius"}));
  const int radius = args.integer("radius", 2, 0, 10);
  Workload w = image_pair_workload(similarity_images(similarity_options(args), seed));
  w.variables["windowRadius"] = radius;
  return w;
}

// LNCC over the clipped window at each active voxel's image index; other
// voxels NaN.
ReferenceOutputs lncc_reference(const Workload& w) {
  const ImagePair p = read_image_pair(w, "similarity_lncc");
  const int radius = workload_int(w, "windowRadius", "similarity_lncc");
  std::vector<double> out(p.dims.voxels(), std::numeric_limits<double>::quiet_NaN());
  const std::size_t sx = static_cast<std::size_t>(p.dims.x), sxy = sx * static_cast<std::size_t>(p.dims.y);
  parallel_for(p.active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto k = static_cast<std::size_t>(p.active[t]);
      out[k] = lncc_at(p.reference, p.warped, p.dims, static_cast<int>(k % sx), static_cast<int>((k % sxy) / sx),
                       static_cast<int>(k / sxy), radius);
    }
  });
  return {{"lnccValues", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("similarity_lncc", generate_lncc);
GI_REGISTER_REFERENCE("similarity_lncc", lncc_reference);
