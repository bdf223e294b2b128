// CPU reference for displacement_to_deformation. Its generator,
// "dense_displacement_field" (a registration's dense displacement: small
// affine plus smooth B-spline), is in seeds/deformation/deformation_support.cpp.
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

int var(const Workload& w, const char* name) { return workload_int(w, name, "displacement_to_deformation"); }

// deformation = voxel position + displacement; w = 0.
ReferenceOutputs displacement_to_deformation_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const auto field = from_bytes<Float4>(w.inputs.at("displacementField"), "displacementField");
  if (field.size() != image.voxels())
    throw std::runtime_error("displacement_to_deformation reference: displacementField holds " +
                             std::to_string(field.size()) + " vectors, the image has " +
                             std::to_string(image.voxels()) + " voxels");
  std::vector<double> out(4 * field.size());
  const std::size_t X = static_cast<std::size_t>(image.x), Y = static_cast<std::size_t>(image.y);
  parallel_for(field.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      out[4 * i + 0] = static_cast<double>(i % X) + field[i].x;
      out[4 * i + 1] = static_cast<double>((i / X) % Y) + field[i].y;
      out[4 * i + 2] = static_cast<double>(i / (X * Y)) + field[i].z;
      out[4 * i + 3] = 0.0;
    }
  });
  return {{"deformationField", std::move(out)}};
}

}  // namespace

GI_REGISTER_REFERENCE("displacement_to_deformation", displacement_to_deformation_reference);
