// CPU reference for deformation_to_displacement. Its generator,
// "dense_deformation_field" (a registration's dense deformation: small affine
// plus smooth B-spline), is in seeds/deformation/deformation_support.cpp.
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

int var(const Workload& w, const char* name) { return workload_int(w, name, "deformation_to_displacement"); }

// displacement = deformation - voxel position; w = 0.
ReferenceOutputs deformation_to_displacement_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "deformationField");
  if (field.size() != image.voxels())
    throw std::runtime_error("deformation_to_displacement reference: deformationField holds " +
                             std::to_string(field.size()) + " vectors, the image has " +
                             std::to_string(image.voxels()) + " voxels");
  std::vector<double> out(4 * field.size());
  const std::size_t X = static_cast<std::size_t>(image.x), Y = static_cast<std::size_t>(image.y);
  parallel_for(field.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      out[4 * i + 0] = field[i].x - static_cast<double>(i % X);
      out[4 * i + 1] = field[i].y - static_cast<double>((i / X) % Y);
      out[4 * i + 2] = field[i].z - static_cast<double>(i / (X * Y));
      out[4 * i + 3] = 0.0;
    }
  });
  return {{"displacementField", std::move(out)}};
}

}  // namespace

GI_REGISTER_REFERENCE("deformation_to_displacement", deformation_to_displacement_reference);
