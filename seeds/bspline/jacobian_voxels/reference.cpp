// CPU reference for bspline_jacobian_voxels: the determinant of the exact
// Jacobian I + d(displacement)/dx at every active voxel. Its workloads come
// from the generator "bspline_brain" (seeds/bspline/deformation_field), the
// same control grids and masks the deformation field is computed on.
#include <array>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/bspline/jacobian_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

int var(const Workload& w, const char* name) { return workload_int(w, name, "bspline_jacobian_voxels"); }

ReferenceOutputs jacobian_voxels_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const Dim3 grid{var(w, "controlPointDimX"), var(w, "controlPointDimY"), var(w, "controlPointDimZ")};
  const std::array<double, 3> spacing = {w.variables.at("spacingX"), w.variables.at("spacingY"),
                                         w.variables.at("spacingZ")};
  const auto points = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "controlPointGrid");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  const std::vector<jacobian::Matrix> voxels = jacobian::voxel_jacobians(points, grid, image, spacing, active);
  std::vector<double> determinants(voxels.size());
  for (std::size_t t = 0; t < voxels.size(); ++t) determinants[t] = jacobian::determinant(voxels[t]);
  return {{"jacobianDeterminants", std::move(determinants)}};
}

}  // namespace

GI_REGISTER_REFERENCE("bspline_jacobian_voxels", jacobian_voxels_reference);
