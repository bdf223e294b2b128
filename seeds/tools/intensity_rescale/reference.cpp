// CPU reference and input generator for intensity_rescale.
//
// Generator "intensity_rescale_image": a T1-like brain image (seeds/common
// brain_phantom.hpp, roughly 0..140) mapped by scale * value + offset, its
// exact minimum and maximum as inputMin and inputMax (what intensity_minmax
// computes), and the new range.
// Variables (all optional):
//   dim: [x, y, z] or n    image size (default 217^3)
//   scale: s               intensity scale (default 1)
//   offset: o              intensity offset (default 0)
//   new_min, new_max       the new range (default 0, 1; new_max > new_min)
// Derived variables: imageDimX/Y/Z, voxelNumber, inputMin, inputMax, newMin,
// newMax (as the kernel's floats see them).
// Inputs: image (float).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_intensity_rescale_image(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("intensity_rescale_image", variables, {"dim", "scale", "offset", "new_min", "new_max"});
  const Dim3 dims = args.dims("dim", Dim3{217, 217, 217});
  const double scale = args.number("scale", 1.0, -1e4, 1e4);
  const double offset = args.number("offset", 0.0, -1e6, 1e6);
  const double new_min = static_cast<float>(args.number("new_min", 0.0, -1e6, 1e6));
  const double new_max = static_cast<float>(args.number("new_max", 1.0, -1e6, 1e6));
  if (!(new_max > new_min)) args.fail("new_max", "must be greater than new_min");
  const std::vector<float> image = tools::intensity_image(dims, scale, offset, seed);
  const auto [lo, hi] = std::minmax_element(image.begin(), image.end());
  if (!(*hi > *lo)) args.fail("dim", "the image is constant: no range to rescale");
  Workload w;
  w.variables = {
      {"imageDimX", dims.x},
      {"imageDimY", dims.y},
      {"imageDimZ", dims.z},
      {"voxelNumber", static_cast<double>(dims.voxels())},
      {"inputMin", *lo},
      {"inputMax", *hi},
      {"newMin", new_min},
      {"newMax", new_max},
  };
  w.inputs["image"] = to_bytes(image);
  return w;
}

// The line through (inputMin, newMin) and (inputMax, newMax), in double.
ReferenceOutputs intensity_rescale_reference(const Workload& w) {
  const int count = workload_int(w, "voxelNumber", "intensity_rescale");
  const auto image = from_bytes<float>(w.inputs.at("image"), "image");
  if (image.size() != static_cast<std::size_t>(count))
    throw std::runtime_error("intensity_rescale reference: image holds " + std::to_string(image.size()) +
                             " values, voxelNumber is " + std::to_string(count));
  const auto get = [&](const char* name) {
    const auto it = w.variables.find(name);
    if (it == w.variables.end())
      throw std::runtime_error(std::string("intensity_rescale reference: no variable '") + name + "'");
    return it->second;
  };
  const double in_min = get("inputMin"), in_max = get("inputMax"), new_min = get("newMin"), new_max = get("newMax");
  if (!(in_max != in_min)) throw std::runtime_error("intensity_rescale reference: inputMax equals inputMin");
  std::vector<double> out(image.size());
  parallel_for(image.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = (image[i] - in_min) * (new_max - new_min) / (in_max - in_min) + new_min;
  });
  return {{"rescaled", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("intensity_rescale_image", generate_intensity_rescale_image);
GI_REGISTER_REFERENCE("intensity_rescale", intensity_rescale_reference);
