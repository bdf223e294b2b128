#include "gi/register/subvoxel_match.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gi::reg {

double block_ncc(const std::vector<float>& reference, const std::vector<float>& warped, std::array<int, 3> dim,
                 std::array<int, 3> origin, std::array<int, 3> d) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double sr = 0, sw = 0, srr = 0, sww = 0, srw = 0;
  int n = 0;
  for (int z = origin[2]; z < std::min(dim[2], origin[2] + 4); ++z)
    for (int y = origin[1]; y < std::min(dim[1], origin[1] + 4); ++y)
      for (int x = origin[0]; x < std::min(dim[0], origin[0] + 4); ++x) {
        const int wx = x + d[0], wy = y + d[1], wz = z + d[2];
        if (wx < 0 || wy < 0 || wz < 0 || wx >= dim[0] || wy >= dim[1] || wz >= dim[2]) return nan;
        const double r = reference[(std::size_t(z) * dim[1] + y) * dim[0] + x];
        const double w = warped[(std::size_t(wz) * dim[1] + wy) * dim[0] + wx];
        sr += r, sw += w, srr += r * r, sww += w * w, srw += r * w;
        ++n;
      }
  if (n == 0) return nan;
  const double vr = srr - sr * sr / n, vw = sww - sw * sw / n;
  if (!(vr > 0) || !(vw > 0)) return nan;
  return (srw - sr * sw / n) / std::sqrt(vr * vw);
}

std::array<double, 3> subvoxel_offset(const std::vector<float>& reference, const std::vector<float>& warped,
                                      std::array<int, 3> dim, std::array<int, 3> origin, std::array<int, 3> d) {
  std::array<double, 3> offset{0, 0, 0};
  const double centre = block_ncc(reference, warped, dim, origin, d);
  if (std::isnan(centre)) return offset;
  for (int a = 0; a < 3; ++a) {
    std::array<int, 3> before = d, after = d;
    --before[a];
    ++after[a];
    const double b = block_ncc(reference, warped, dim, origin, before), c = block_ncc(reference, warped, dim, origin, after);
    const double curvature = b - 2 * centre + c;
    // A peak has negative curvature; anything else gives no fraction.
    if (std::isnan(b) || std::isnan(c) || !(curvature < 0)) continue;
    offset[a] = std::clamp(0.5 * (b - c) / curvature, -0.5, 0.5);
  }
  return offset;
}

}  // namespace gi::reg
