// CPU reference for deformation_jacobian. Its generator,
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

int var(const Workload& w, const char* name) { return workload_int(w, name, "deformation_jacobian"); }

// Central differences inside, one-sided at the border; J row by row, then det J.
ReferenceOutputs jacobian_reference(const Workload& w) {
  const Dim3 image{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const auto field = from_bytes<Float4>(w.inputs.at("deformationField"), "deformationField");
  if (field.size() != image.voxels())
    throw std::runtime_error("deformation_jacobian reference: deformationField holds " +
                             std::to_string(field.size()) + " vectors, the image has " +
                             std::to_string(image.voxels()) + " voxels");
  if (image.x < 2 || image.y < 2 || image.z < 2)
    throw std::runtime_error("deformation_jacobian reference: every axis needs at least 2 voxels");
  const int dims[3] = {image.x, image.y, image.z};
  std::vector<double> matrices(9 * field.size()), determinants(field.size());
  const std::size_t X = static_cast<std::size_t>(image.x), Y = static_cast<std::size_t>(image.y);
  parallel_for(field.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const int v[3] = {static_cast<int>(i % X), static_cast<int>((i / X) % Y), static_cast<int>(i / (X * Y))};
      double j[3][3];
      for (int c = 0; c < 3; ++c) {
        int lo[3] = {v[0], v[1], v[2]}, hi[3] = {v[0], v[1], v[2]};
        if (v[c] > 0) lo[c] = v[c] - 1;
        if (v[c] < dims[c] - 1) hi[c] = v[c] + 1;
        const Float4& a = field[image.index(lo[0], lo[1], lo[2])];
        const Float4& b = field[image.index(hi[0], hi[1], hi[2])];
        const double span = hi[c] - lo[c];
        j[0][c] = (static_cast<double>(b.x) - a.x) / span;
        j[1][c] = (static_cast<double>(b.y) - a.y) / span;
        j[2][c] = (static_cast<double>(b.z) - a.z) / span;
      }
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) matrices[9 * i + static_cast<std::size_t>(3 * r + c)] = j[r][c];
      determinants[i] = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) -
                        j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0]) +
                        j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
    }
  });
  return {{"jacobianMatrices", std::move(matrices)}, {"jacobianDeterminants", std::move(determinants)}};
}

}  // namespace

GI_REGISTER_REFERENCE("deformation_jacobian", jacobian_reference);
