// CPU reference and input generator for gradient_to_real_space.
//
// Generator "node_gradient_orientation": the node gradient of a registration
// in progress (the voxel-based SSD gradient of seeds/tools/tools_support.hpp
// taken to the nodes by the voxel-to-node reference, in double, then rounded
// to float; junk in w) and the voxel-to-real orientation of the image: a
// rotation by random angles of up to `tilt` degrees about each axis times the
// voxel sizes, optionally with the x axis flipped (radiological order).
// Variables (all optional):
//   dim, spacing, mask, displacement, amplitude   as generator "ssd_voxel_gradient"
//   voxel_size: s or [x, y, z]   voxel size in mm (default 1)
//   tilt: t                      largest rotation angle in degrees (default 5)
//   flip: none | x               (default none)
// Derived variables: controlPointNumber, m00 .. m22 (row-major, as the kernel's
// floats see them).
// Inputs: nodeGradient (float4).
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"
#include "seeds/tools/tools_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

using Matrix = std::array<std::array<double, 3>, 3>;

Matrix multiply(const Matrix& a, const Matrix& b) {
  Matrix m{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) m[r][c] += a[r][k] * b[k][c];
  return m;
}

Matrix rotation(int axis, double angle) {
  Matrix m{};
  const double c = std::cos(angle), s = std::sin(angle);
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  m[axis][axis] = 1;
  m[u][u] = c;
  m[u][v] = -s;
  m[v][u] = s;
  m[v][v] = c;
  return m;
}

const char* kMatrixNames[3][3] = {{"m00", "m01", "m02"}, {"m10", "m11", "m12"}, {"m20", "m21", "m22"}};

Workload generate_node_gradient_orientation(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("node_gradient_orientation", variables,
                           {"dim", "spacing", "mask", "displacement", "amplitude", "voxel_size", "tilt", "flip"});
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  std::array<double, 3> spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  for (double& s : spacing) s = static_cast<float>(s);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const double displacement = args.number("displacement", 2.0, 0.0, 20.0);
  const double amplitude = args.number("amplitude", 1.0, 0.0, 1e4);
  const std::array<double, 3> voxel_size = args.vec3("voxel_size", {1, 1, 1}, 0.01, 100.0);
  const double tilt = args.number("tilt", 5.0, 0.0, 180.0) * 3.141592653589793 / 180.0;
  const bool flip = args.choice("flip", "none", {"none", "x"}) == "x";

  const Dim3 grid = control_grid_dims(image, spacing);
  const tools::SsdStep step = tools::ssd_step(image, shape, displacement, seed);
  const std::vector<Float4> voxel_gradient = tools::scaled_gradient_with_junk(step, amplitude, seed);
  const std::vector<double> nodes = tools::voxel_to_node(voxel_gradient, image, grid, spacing);

  Rng rng(seed, kStreamAffine);
  Matrix scale{};
  for (int a = 0; a < 3; ++a) scale[a][a] = voxel_size[static_cast<std::size_t>(a)] * (a == 0 && flip ? -1 : 1);
  const Matrix m = multiply(
      multiply(rotation(2, rng.uniform(-tilt, tilt)), multiply(rotation(1, rng.uniform(-tilt, tilt)),
                                                                rotation(0, rng.uniform(-tilt, tilt)))),
      scale);

  Workload w;
  w.variables = {
      {"imageDimX", image.x},
      {"imageDimY", image.y},
      {"imageDimZ", image.z},
      {"controlPointDimX", grid.x},
      {"controlPointDimY", grid.y},
      {"controlPointDimZ", grid.z},
      {"controlPointNumber", static_cast<double>(grid.voxels())},
  };
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) w.variables.emplace(kMatrixNames[r][c], static_cast<float>(m[r][c]));
  w.inputs["nodeGradient"] = to_bytes(tools::nodes_with_junk(nodes, seed));
  return w;
}

// out = M (x, y, z) with the float matrix entries, in double; w = 0.
ReferenceOutputs gradient_to_real_space_reference(const Workload& w) {
  const int count = workload_int(w, "controlPointNumber", "gradient_to_real_space");
  Matrix m{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const auto it = w.variables.find(kMatrixNames[r][c]);
      if (it == w.variables.end())
        throw std::runtime_error(std::string("gradient_to_real_space reference: no variable '") +
                                 kMatrixNames[r][c] + "'");
      m[r][c] = it->second;
    }
  const auto gradient = from_bytes<Float4>(w.inputs.at("nodeGradient"), "nodeGradient");
  if (gradient.size() != static_cast<std::size_t>(count))
    throw std::runtime_error("gradient_to_real_space reference: nodeGradient holds " +
                             std::to_string(gradient.size()) + " vectors, controlPointNumber is " +
                             std::to_string(count));
  std::vector<double> out(4 * gradient.size());
  parallel_for(gradient.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t n = begin; n < end; ++n) {
      const double g[3] = {gradient[n].x, gradient[n].y, gradient[n].z};
      for (int r = 0; r < 3; ++r) out[4 * n + static_cast<std::size_t>(r)] = m[r][0] * g[0] + m[r][1] * g[1] + m[r][2] * g[2];
      out[4 * n + 3] = 0.0;
    }
  });
  return {{"realGradient", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("node_gradient_orientation", generate_node_gradient_orientation);
GI_REGISTER_REFERENCE("gradient_to_real_space", gradient_to_real_space_reference);
