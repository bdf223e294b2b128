#include "seeds/resampling/resampling_support.hpp"

#include <cmath>
#include <stdexcept>

#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"

namespace gi::seeds {

ResamplingCase resampling_case(const std::string& generator, const nlohmann::json& variables, std::uint64_t seed,
                               bool with_padding) {
  std::vector<std::string> allowed = {"dim", "floating_dim", "spacing", "amplitude", "mask"};
  if (with_padding) allowed.emplace_back("padding");
  const GeneratorArgs args(generator, variables, allowed);
  ResamplingCase c;
  c.reference = args.dims("dim", Dim3{217, 217, 217});
  c.floating = args.dims("floating_dim", c.reference);
  const std::array<double, 3> spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  const double amplitude = args.number("amplitude", 3.0, 0.0, 50.0);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  c.padding = with_padding ? static_cast<float>(args.number("padding", 0.0, -1e6, 1e6)) : 0.0;
  c.active = active_voxels(c.reference, shape, seed);
  c.positions = registration_positions(c.reference, c.floating, spacing, amplitude, c.active, seed);
  c.image = tissue_image(c.floating, seed);
  return c;
}

std::map<std::string, double> resampling_variables(const ResamplingCase& c, bool with_padding) {
  std::map<std::string, double> v = {
      {"referenceDimX", c.reference.x},
      {"referenceDimY", c.reference.y},
      {"referenceDimZ", c.reference.z},
      {"referenceVoxelNumber", static_cast<double>(c.reference.voxels())},
      {"floatingDimX", c.floating.x},
      {"floatingDimY", c.floating.y},
      {"floatingDimZ", c.floating.z},
      {"floatingVoxelNumber", static_cast<double>(c.floating.voxels())},
      {"activeVoxelNumber", static_cast<double>(c.active.size())},
  };
  if (with_padding) v.emplace("paddingValue", c.padding);
  return v;
}

std::vector<Float4> registration_positions(Dim3 reference, Dim3 floating, const std::array<double, 3>& spacing,
                                           double amplitude, const std::vector<std::int32_t>& active,
                                           std::uint64_t seed) {
  const Dim3 grid = control_grid_dims(reference, spacing);
  const std::vector<double> deformation =
      bspline_deformation(smooth_control_grid(grid, amplitude, seed), grid, reference, spacing, active);
  Rng rng(seed, kStreamAffine);
  const double angle = rng.uniform(-3, 3) * 3.141592653589793 / 180.0;
  const double t[3] = {rng.uniform(-2, 2), rng.uniform(-2, 2), rng.uniform(-2, 2)};
  const double centre[3] = {(reference.x - 1) / 2.0, (reference.y - 1) / 2.0, (reference.z - 1) / 2.0};
  const double cs = std::cos(angle), sn = std::sin(angle);
  // Reference voxel -> floating voxel: voxel centres of the same field of view.
  const double scale[3] = {static_cast<double>(floating.x) / reference.x, static_cast<double>(floating.y) / reference.y,
                           static_cast<double>(floating.z) / reference.z};
  std::vector<Float4> positions(active.size());
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const double p[3] = {deformation[4 * i] - centre[0], deformation[4 * i + 1] - centre[1],
                           deformation[4 * i + 2] - centre[2]};
      const double q[3] = {cs * p[0] - sn * p[1] + centre[0] + t[0], sn * p[0] + cs * p[1] + centre[1] + t[1],
                           p[2] + centre[2] + t[2]};
      positions[i].x = static_cast<float>((q[0] + 0.5) * scale[0] - 0.5);
      positions[i].y = static_cast<float>((q[1] + 0.5) * scale[1] - 0.5);
      positions[i].z = static_cast<float>((q[2] + 0.5) * scale[2] - 0.5);
      positions[i].w = 0.0f;
    }
  });
  return positions;
}

double trilinear_interpolate(const std::vector<float>& image, Dim3 dims, double x, double y, double z, double padding) {
  const double pos[3] = {x, y, z};
  int pre[3];
  double weight[3][2];
  for (int a = 0; a < 3; ++a) {
    pre[a] = static_cast<int>(std::floor(pos[a]));
    const double rel = pos[a] - pre[a];
    weight[a][0] = 1.0 - rel;
    weight[a][1] = rel;
  }
  double value = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) {
        const int X = pre[0] + a, Y = pre[1] + b, Z = pre[2] + c;
        const bool inside = X >= 0 && X < dims.x && Y >= 0 && Y < dims.y && Z >= 0 && Z < dims.z;
        const double intensity = inside ? image[dims.index(X, Y, Z)] : padding;
        value += weight[0][a] * weight[1][b] * weight[2][c] * intensity;
      }
  return value;
}

namespace {

// Unser's recursive filter on one line (stride apart), in place: a causal and
// an anti-causal first-order pass for the pole z = sqrt(3) - 2, gain 6.
void prefilter_line(double* line, std::size_t n, std::size_t stride) {
  if (n < 2) return;
  const double z = std::sqrt(3.0) - 2.0;
  auto at = [&](std::size_t k) -> double& { return line[k * stride]; };
  for (std::size_t k = 0; k < n; ++k) at(k) *= 6.0;  // (1 - z)(1 - 1/z)
  // Causal initial value for a mirror-symmetric signal.
  const auto horizon = static_cast<std::size_t>(std::ceil(std::log(1e-16) / std::log(std::fabs(z))));
  double sum;
  if (horizon < n) {
    double zn = z;
    sum = at(0);
    for (std::size_t k = 1; k < horizon; ++k) {
      sum += zn * at(k);
      zn *= z;
    }
  } else {
    double zn = z;
    const double iz = 1.0 / z;
    double z2n = std::pow(z, static_cast<double>(n - 1));
    sum = at(0) + z2n * at(n - 1);
    z2n *= z2n * iz;
    for (std::size_t k = 1; k + 1 < n; ++k) {
      sum += (zn + z2n) * at(k);
      zn *= z;
      z2n *= iz;
    }
    sum /= 1.0 - zn * zn;
  }
  at(0) = sum;
  for (std::size_t k = 1; k < n; ++k) at(k) += z * at(k - 1);
  at(n - 1) = z / (z * z - 1.0) * (z * at(n - 2) + at(n - 1));
  for (std::size_t k = n - 1; k-- > 0;) at(k) = z * (at(k + 1) - at(k));
}

}  // namespace

std::vector<double> cubic_bspline_coefficients(const std::vector<float>& image, Dim3 dims) {
  if (image.size() != dims.voxels())
    throw std::runtime_error("cubic_bspline_coefficients: the image holds " + std::to_string(image.size()) +
                             " voxels, its dimensions say " + std::to_string(dims.voxels()));
  std::vector<double> c(image.begin(), image.end());
  const auto nx = static_cast<std::size_t>(dims.x), ny = static_cast<std::size_t>(dims.y),
             nz = static_cast<std::size_t>(dims.z);
  // Along x: lines are (y, z); along y: (x, z); along z: (x, y).
  parallel_for(ny * nz, [&](std::size_t begin, std::size_t end) {
    for (std::size_t l = begin; l < end; ++l) prefilter_line(c.data() + l * nx, nx, 1);
  });
  parallel_for(nx * nz, [&](std::size_t begin, std::size_t end) {
    for (std::size_t l = begin; l < end; ++l) {
      const std::size_t x = l % nx, z = l / nx;
      prefilter_line(c.data() + z * nx * ny + x, ny, nx);
    }
  });
  parallel_for(nx * ny, [&](std::size_t begin, std::size_t end) {
    for (std::size_t l = begin; l < end; ++l) prefilter_line(c.data() + l, nz, nx * ny);
  });
  return c;
}

}  // namespace gi::seeds
