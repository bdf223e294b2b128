// Accuracy of an estimated displacement field against a known truth
// (accuracy.hpp): error percentiles, folding, field comparison, and the
// conversion of elastix's LPS-millimetre deformation field to voxel units.
#include "gi/register/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gi::reg {
namespace {

void require_components(const Volume& v, int components, const char* what) {
  if (v.components != components || v.data.size() != v.voxels() * std::size_t(components))
    throw std::invalid_argument(std::string(what) + ": expected " + std::to_string(components) +
                                " component(s), got " + std::to_string(v.components));
}

void require_same_dims(const Volume& a, const Volume& b, const char* what) {
  if (a.dim != b.dim)
    throw std::invalid_argument(std::string(what) + ": grid " + std::to_string(b.dim[0]) + "x" +
                                std::to_string(b.dim[1]) + "x" + std::to_string(b.dim[2]) + " differs from " +
                                std::to_string(a.dim[0]) + "x" + std::to_string(a.dim[1]) + "x" +
                                std::to_string(a.dim[2]));
}

// |a(v) - b(v)| over the three components (b may be null: |a(v)|).
double length_of_difference(const Volume& a, const Volume* b, std::size_t v) {
  const std::size_t n = a.voxels();
  double s = 0;
  for (int c = 0; c < 3; ++c) {
    const double d = double(a.data[c * n + v]) - (b ? double(b->data[c * n + v]) : 0.0);
    s += d * d;
  }
  return std::sqrt(s);
}

// |L (a(v) - b(v))|, L the 3x3 linear part of `voxel_to_world`: the
// difference of two voxel-unit displacements in millimetres.
double length_of_difference_mm(const Volume& a, const Volume& b, std::size_t v,
                               const std::array<std::array<double, 4>, 4>& voxel_to_world) {
  const std::size_t n = a.voxels();
  double d[3];
  for (int c = 0; c < 3; ++c) d[c] = double(a.data[c * n + v]) - double(b.data[c * n + v]);
  double s = 0;
  for (int r = 0; r < 3; ++r) {
    const double mm = voxel_to_world[r][0] * d[0] + voxel_to_world[r][1] * d[1] + voxel_to_world[r][2] * d[2];
    s += mm * mm;
  }
  return std::sqrt(s);
}

}  // namespace

double percentile_nearest_rank(const std::vector<float>& sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty list");
  if (!(p >= 0 && p <= 100)) throw std::invalid_argument("percentile outside [0, 100]: " + std::to_string(p));
  // The rank is rounded up so that at least p% of the values are <= the result;
  // the small tolerance keeps e.g. 95% of 20 values at rank 19, not 20, despite rounding.
  const double exact = p / 100.0 * double(sorted.size());
  std::size_t rank = std::size_t(std::ceil(exact - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Summary summarise(std::vector<float> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());  // 1-2 M values: a sort is well under a second
  double sum = 0;
  for (float v : values) sum += v;
  s.count = values.size();
  s.mean = sum / double(values.size());
  s.median = percentile_nearest_rank(values, 50);
  s.p95 = percentile_nearest_rank(values, 95);
  s.p99 = percentile_nearest_rank(values, 99);
  s.max = values.back();
  return s;
}

nlohmann::json to_json(const Summary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p95", s.p95}, {"p99", s.p99}, {"max", s.max}};
}

std::vector<float> jacobian_determinants(const Volume& f) {
  require_components(f, 3, "jacobian_determinants");
  const auto [nx, ny, nz] = f.dim;
  const std::size_t n = f.voxels();
  const std::size_t stride[3] = {1, std::size_t(nx), std::size_t(nx) * ny};
  const int size[3] = {nx, ny, nz};
  std::vector<float> det(n);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::size_t v = f.index(x, y, z);
        const int pos[3] = {x, y, z};
        double m[3][3];  // m[c][a] = delta(c, a) + d u_c / d x_a
        for (int a = 0; a < 3; ++a) {
          // Central difference inside, one-sided at a border, none along a one-voxel axis.
          const bool lo = pos[a] > 0, hi = pos[a] < size[a] - 1;
          const std::size_t vm = lo ? v - stride[a] : v, vp = hi ? v + stride[a] : v;
          const double h = (lo && hi) ? 2.0 : (lo || hi) ? 1.0 : 0.0;
          for (int c = 0; c < 3; ++c) {
            const double d = h > 0 ? (double(f.data[c * n + vp]) - f.data[c * n + vm]) / h : 0.0;
            m[c][a] = (c == a ? 1.0 : 0.0) + d;
          }
        }
        det[v] = float(m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]));
      }
  return det;
}

AccuracyReport measure_accuracy(const Volume& estimated, const Volume& truth, const Volume& mask) {
  require_components(estimated, 3, "estimated displacement");
  require_components(truth, 3, "truth displacement");
  require_components(mask, 1, "mask");
  require_same_dims(truth, estimated, "estimated displacement");
  require_same_dims(truth, mask, "mask");
  AccuracyReport r;
  r.voxels = truth.voxels();
  std::vector<float> error, error_mm, truth_len, est_len;
  for (std::size_t v = 0; v < r.voxels; ++v) {
    if (!(mask.data[v] > 0.5f)) continue;
    error.push_back(float(length_of_difference(estimated, &truth, v)));
    error_mm.push_back(float(length_of_difference_mm(estimated, truth, v, truth.voxel_to_world)));
    truth_len.push_back(float(length_of_difference(truth, nullptr, v)));
    est_len.push_back(float(length_of_difference(estimated, nullptr, v)));
  }
  r.mask_voxels = error.size();
  r.error = summarise(std::move(error));
  r.error_mm = summarise(std::move(error_mm));
  r.truth_length = summarise(std::move(truth_len));
  r.estimated_length = summarise(std::move(est_len));
  const std::vector<float> det = jacobian_determinants(estimated);
  r.min_jacobian = std::numeric_limits<double>::infinity();
  r.min_jacobian_in_mask = std::numeric_limits<double>::infinity();
  for (std::size_t v = 0; v < r.voxels; ++v) {
    const bool in_mask = mask.data[v] > 0.5f;
    // A NaN determinant is counted as folded: a broken field must not pass as smooth.
    const bool folded = !(det[v] > 0);
    r.folded += folded;
    r.folded_in_mask += folded && in_mask;
    r.min_jacobian = std::min(r.min_jacobian, double(det[v]));
    if (in_mask) r.min_jacobian_in_mask = std::min(r.min_jacobian_in_mask, double(det[v]));
  }
  if (r.voxels > 0) r.folded_fraction = double(r.folded) / double(r.voxels);
  if (r.mask_voxels > 0) r.folded_fraction_in_mask = double(r.folded_in_mask) / double(r.mask_voxels);
  if (r.mask_voxels == 0) r.min_jacobian_in_mask = 0;
  if (r.voxels == 0) r.min_jacobian = 0;
  return r;
}

nlohmann::json to_json(const AccuracyReport& r) {
  return {{"units", "voxels of the reference grid (error_in_mask_mm: millimetres)"},
          {"percentile_rule", "nearest rank: the ceil(p/100 n)-th smallest"},
          {"voxels", r.voxels},
          {"mask_voxels", r.mask_voxels},
          {"error_in_mask", to_json(r.error)},
          {"error_in_mask_mm", to_json(r.error_mm)},
          {"mm_rule", "|L (estimated - truth)|, L the 3x3 linear part of the truth's (reference's) voxel_to_world"},
          {"truth_length_in_mask", to_json(r.truth_length)},
          {"estimated_length_in_mask", to_json(r.estimated_length)},
          {"folding",
           {{"rule", "det(I + grad u) <= 0, central differences (one-sided at borders)"},
            {"folded_voxels_in_mask", r.folded_in_mask},
            {"folded_fraction_in_mask", r.folded_fraction_in_mask},
            {"folded_voxels", r.folded},
            {"folded_fraction", r.folded_fraction},
            {"min_jacobian_in_mask", r.min_jacobian_in_mask},
            {"min_jacobian", r.min_jacobian}}}};
}

FieldComparison compare_fields(const Volume& a, const Volume& b, const Volume& mask) {
  require_components(a, 3, "first field");
  require_components(b, 3, "second field");
  require_components(mask, 1, "mask");
  require_same_dims(a, b, "second field");
  require_same_dims(a, mask, "mask");
  std::vector<float> diff;
  for (std::size_t v = 0; v < a.voxels(); ++v)
    if (mask.data[v] > 0.5f) diff.push_back(float(length_of_difference(a, &b, v)));
  const Summary s = summarise(std::move(diff));
  return {s.count, s.mean, s.median, s.p99, s.max};
}

nlohmann::json to_json(const FieldComparison& c) {
  return {{"mask_voxels", c.mask_voxels}, {"mean", c.mean}, {"p50", c.p50}, {"p99", c.p99}, {"max", c.max}};
}

Volume elastix_lps_mm_to_voxels(const Volume& deformation, const std::array<std::array<double, 4>, 4>& m) {
  require_components(deformation, 3, "elastix deformation field");
  // inverse(A) by the adjugate; A maps voxel steps to RAS millimetres.
  const double a[3][3] = {{m[0][0], m[0][1], m[0][2]}, {m[1][0], m[1][1], m[1][2]}, {m[2][0], m[2][1], m[2][2]}};
  const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  if (!(std::abs(det) > 1e-12)) throw std::invalid_argument("reference voxel_to_world is singular");
  double inv[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      // Cofactor of a[j][i] (transposed) over det.
      const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      inv[i][j] = (a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0]) / det;
    }
  // LPS -> RAS flips the first two axes: fold it into the matrix's columns.
  const double flip[3] = {-1, -1, 1};
  Volume out = deformation;
  const std::size_t n = deformation.voxels();
  for (std::size_t v = 0; v < n; ++v) {
    const double d[3] = {deformation.data[v], deformation.data[n + v], deformation.data[2 * n + v]};
    for (int i = 0; i < 3; ++i)
      out.data[i * n + v] = float(inv[i][0] * flip[0] * d[0] + inv[i][1] * flip[1] * d[1] + inv[i][2] * flip[2] * d[2]);
  }
  return out;
}

}  // namespace gi::reg
