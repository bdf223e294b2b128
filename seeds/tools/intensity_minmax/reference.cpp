// CPU reference and input generator for intensity_minmax.
//
// Generator "intensity_minmax_image": a T1-like brain image (seeds/common
// brain_phantom.hpp, roughly 0..140) mapped by scale * value + offset, so
// that negative (CT-like) ranges are covered too. The inout minMax starts at
// (+inf, -inf).
// Variables (all optional):
//   dim: [x, y, z] or n    image size (default 217^3)
//   scale: s               intensity scale (default 1)
//   offset: o              intensity offset (default 0)
// Derived variables: imageDimX/Y/Z, voxelNumber.
// Inputs: image (float), minMax (float, 2 elements: +inf, -inf).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_intensity_minmax_image(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("intensity_minmax_image", variables, {"dim", "scale", "offset"});
  const Dim3 dims = args.dims("dim", Dim3{217, 217, 217});
  const double scale = args.number("scale", 1.0, -1e4, 1e4);
  const double offset = args.number("offset", 0.0, -1e6, 1e6);
  Workload w;
  w.variables = {
      {"imageDimX", dims.x},
      {"imageDimY", dims.y},
      {"imageDimZ", dims.z},
      {"voxelNumber", static_cast<double>(dims.voxels())},
  };
  w.inputs["image"] = to_bytes(tools::intensity_image(dims, scale, offset, seed));
  w.inputs["minMax"] =
      to_bytes(std::vector<float>{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()});
  return w;
}

// min and max of the initial minMax and every intensity (exact).
ReferenceOutputs intensity_minmax_reference(const Workload& w) {
  const int count = workload_int(w, "voxelNumber", "intensity_minmax");
  const auto image = from_bytes<float>(w.inputs.at("image"), "image");
  const auto initial = from_bytes<float>(w.inputs.at("minMax"), "minMax");
  if (image.size() != static_cast<std::size_t>(count) || initial.size() != 2)
    throw std::runtime_error("intensity_minmax reference: image holds " + std::to_string(image.size()) +
                             " values (voxelNumber is " + std::to_string(count) + "), minMax " +
                             std::to_string(initial.size()) + " (expected 2)");
  double lo = initial[0], hi = initial[1];
  for (const float v : image) {
    lo = std::min(lo, static_cast<double>(v));
    hi = std::max(hi, static_cast<double>(v));
  }
  return {{"minMax", {lo, hi}}};
}

}  // namespace

GI_REGISTER_GENERATOR("intensity_minmax_image", generate_intensity_minmax_image);
GI_REGISTER_REFERENCE("intensity_minmax", intensity_minmax_reference);
