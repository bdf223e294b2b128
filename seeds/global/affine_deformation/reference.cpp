// CPU reference and input generator for affine_deformation_field.
//
// Generator "affine_brain": the affine part of a registration - a small
// rotation, per-axis scaling and translation about the image centre
// (seeds/global/global_support.hpp), applied to the active voxels of the
// reference image. Variables (all optional):
//   dim: [x, y, z] or n      image size in voxels (default 217^3)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   rotation: r              largest rotation about each axis, degrees (default 4)
//   scaling: s               largest per-axis scaling away from 1 (default 0.05)
//   translation: t           largest translation per axis, voxels (default 3)
// Derived variables: imageDimX/Y/Z, voxelNumber, activeVoxelNumber.
// Inputs: transformationMatrix (12 float), activeVoxels (int).
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"
#include "seeds/global/global_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

Workload generate_affine_brain(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("affine_brain", variables, {"dim", "mask", "rotation", "scaling", "translation"});
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const double rotation = args.number("rotation", 4.0, 0.0, 45.0);
  const double scaling = args.number("scaling", 0.05, 0.0, 0.5);
  const double translation = args.number("translation", 3.0, 0.0, 100.0);

  const Affine affine = random_affine(image, rotation, scaling, translation, seed, kStreamAffine).rounded_to_float();
  std::vector<float> matrix(12);
  for (std::size_t i = 0; i < 12; ++i) matrix[i] = static_cast<float>(affine.m[i]);
  const std::vector<std::int32_t> active = active_voxels(image, shape, seed);
  Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"voxelNumber", static_cast<double>(image.voxels())},
      {"activeVoxelNumber", static_cast<double>(active.size())},
  };
  w.inputs["transformationMatrix"] = to_bytes(matrix);
  w.inputs["activeVoxels"] = to_bytes(active);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "affine_deformation_field"); }

ReferenceOutputs affine_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const auto matrix = from_bytes<float>(w.inputs.at("transformationMatrix"), "transformationMatrix");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  if (matrix.size() != 12)
    throw std::runtime_error("affine_deformation_field reference: transformationMatrix holds " +
                             std::to_string(matrix.size()) + " floats, expected 12");
  Affine affine;
  for (std::size_t i = 0; i < 12; ++i) affine.m[i] = matrix[i];
  for (const std::int32_t i : active)
    if (i < 0 || static_cast<std::size_t>(i) >= image.voxels())
      throw std::runtime_error("affine_deformation_field reference: active voxel " + std::to_string(i) +
                               " outside the image");
  std::vector<double> out(4 * active.size());
  const std::size_t slice = static_cast<std::size_t>(image.x) * static_cast<std::size_t>(image.y);
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto index = static_cast<std::size_t>(active[t]);
      const double z = static_cast<double>(index / slice);
      const double y = static_cast<double>((index % slice) / static_cast<std::size_t>(image.x));
      const double x = static_cast<double>(index % static_cast<std::size_t>(image.x));
      affine.apply(x, y, z, &out[4 * t]);
      out[4 * t + 3] = 0.0;
    }
  });
  return {{"deformationField", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("affine_brain", generate_affine_brain);
GI_REGISTER_REFERENCE("affine_deformation_field", affine_reference);
