#include "seeds/global/global_support.hpp"

#include <cmath>

#include "seeds/common/rng.hpp"

namespace gi::seeds {

Affine Affine::rounded_to_float() const {
  Affine a;
  for (std::size_t i = 0; i < m.size(); ++i) a.m[i] = static_cast<float>(m[i]);
  return a;
}

Affine random_affine(Dim3 dims, double max_rotation_degrees, double max_scaling, double max_translation,
                     std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  constexpr double kDegree = 3.141592653589793 / 180.0;
  const double ax = rng.uniform(-max_rotation_degrees, max_rotation_degrees) * kDegree;
  const double ay = rng.uniform(-max_rotation_degrees, max_rotation_degrees) * kDegree;
  const double az = rng.uniform(-max_rotation_degrees, max_rotation_degrees) * kDegree;
  const double scale[3] = {1 + rng.uniform(-max_scaling, max_scaling), 1 + rng.uniform(-max_scaling, max_scaling),
                           1 + rng.uniform(-max_scaling, max_scaling)};
  const double t[3] = {rng.uniform(-max_translation, max_translation),
                       rng.uniform(-max_translation, max_translation),
                       rng.uniform(-max_translation, max_translation)};
  // R = Rz Ry Rx.
  const double cx = std::cos(ax), sx = std::sin(ax), cy = std::cos(ay), sy = std::sin(ay), cz = std::cos(az),
               sz = std::sin(az);
  const double rx[3][3] = {{1, 0, 0}, {0, cx, -sx}, {0, sx, cx}};
  const double ry[3][3] = {{cy, 0, sy}, {0, 1, 0}, {-sy, 0, cy}};
  const double rz[3][3] = {{cz, -sz, 0}, {sz, cz, 0}, {0, 0, 1}};
  double ryx[3][3] = {}, r[3][3] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) ryx[i][j] += ry[i][k] * rx[k][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) r[i][j] += rz[i][k] * ryx[k][j];
  const double c[3] = {(dims.x - 1) / 2.0, (dims.y - 1) / 2.0, (dims.z - 1) / 2.0};
  Affine a;
  for (int i = 0; i < 3; ++i) {
    double shift = c[i] + t[i];
    for (int j = 0; j < 3; ++j) {
      a.m[static_cast<std::size_t>(4 * i + j)] = r[i][j] * scale[j];
      shift -= r[i][j] * scale[j] * c[j];
    }
    a.m[static_cast<std::size_t>(4 * i + 3)] = shift;
  }
  return a;
}

}  // namespace gi::seeds
