// Rigid (Horn 1987, unit quaternions) and affine (linear least squares) fits
// of point pairs, trimmed as least trimmed squares; see affine_fit.hpp.
#include "gi/register/affine_fit.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace gi::reg {
namespace {

using Matrix3 = std::array<std::array<double, 3>, 3>;

// Gauss-Jordan elimination with partial pivoting: solves a x = b in place of
// b. False when a pivot is not above `relative_tolerance` times the largest
// entry of a: singularity judged against the matrix's own scale, so that
// millimetre and metre coordinates behave alike.
template <std::size_t N, std::size_t M>
bool solve_in_place(std::array<std::array<double, N>, N> a, std::array<std::array<double, M>, N>& b,
                    double relative_tolerance) {
  double scale = 0;
  for (const auto& row : a)
    for (double v : row) scale = std::max(scale, std::abs(v));
  if (!std::isfinite(scale) || scale == 0) return false;
  for (std::size_t col = 0; col < N; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < N; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (!(std::abs(a[pivot][col]) > relative_tolerance * scale)) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (std::size_t r = 0; r < N; ++r) {
      if (r == col || a[r][col] == 0) continue;
      const double f = a[r][col] / a[col][col];
      for (std::size_t k = col; k < N; ++k) a[r][k] -= f * a[col][k];
      for (std::size_t k = 0; k < M; ++k) b[r][k] -= f * b[col][k];
    }
  }
  for (std::size_t r = 0; r < N; ++r)
    for (std::size_t k = 0; k < M; ++k) b[r][k] /= a[r][r];
  return true;
}

// Cyclic Jacobi iteration on a symmetric 4x4 matrix: plane rotations zero the
// off-diagonal entries one at a time (each sweep shrinks them quadratically
// once small); the product of the rotations holds the eigenvectors as
// columns. Returns the (unit) eigenvector of the largest eigenvalue.
std::array<double, 4> largest_eigenvector(Matrix4 a) {
  Matrix4 v = identity4();
  double norm = 0;
  for (const auto& row : a)
    for (double x : row) norm += x * x;
  const double negligible = 1e-18 * std::sqrt(norm);
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < 3; ++p)
      for (int q = p + 1; q < 4; ++q) {
        if (std::abs(a[p][q]) <= negligible) continue;
        rotated = true;
        // The angle that makes the new (p, q) entry zero; the smaller root of
        // t^2 + 2 theta t - 1 = 0 keeps the rotation below 45 degrees (stable).
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 4; ++k) {  // a <- a J, v <- v J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
        for (int k = 0; k < 4; ++k) {  // a <- J^T a
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
      }
    if (!rotated) break;
  }
  int best = 0;
  for (int i = 1; i < 4; ++i)
    if (a[i][i] > a[best][best]) best = i;
  return {v[0][best], v[1][best], v[2][best], v[3][best]};
}

// The rotation R maximising trace(R S) (Horn 1987): the unit quaternion of
// the largest eigenvalue of Horn's symmetric matrix N(S). With S the
// cross-covariance sum a b^T of centred pairs a -> b it is the least-squares
// rotation; a quaternion is always a proper rotation, so reflected data
// cannot give det -1.
Matrix3 rotation_maximising_trace(const Matrix3& s) {
  const double xx = s[0][0], xy = s[0][1], xz = s[0][2];
  const double yx = s[1][0], yy = s[1][1], yz = s[1][2];
  const double zx = s[2][0], zy = s[2][1], zz = s[2][2];
  const Matrix4 n = {{{xx + yy + zz, yz - zy, zx - xz, xy - yx},
                      {yz - zy, xx - yy - zz, xy + yx, zx + xz},
                      {zx - xz, xy + yx, -xx + yy - zz, yz + zy},
                      {xy - yx, zx + xz, yz + zy, -xx - yy + zz}}};
  const auto [w, x, y, z] = largest_eigenvector(n);
  return {{{w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)},
           {2 * (y * x + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)},
           {2 * (z * x - w * y), 2 * (z * y + w * x), w * w - x * x - y * y + z * z}}};
}

struct Centred {
  Point3 from_mean{}, to_mean{};
  Matrix3 from_from{}, from_to{};  // sum a a^T and sum a b^T of the centred points
};

// Centring first decouples the translation from the linear part and keeps the
// sums well conditioned when the points sit far from the origin.
Centred centre(const std::vector<PointPair>& pairs, const std::vector<std::size_t>& kept) {
  Centred c;
  for (std::size_t i : kept)
    for (int k = 0; k < 3; ++k) {
      c.from_mean[k] += pairs[i].from[k];
      c.to_mean[k] += pairs[i].to[k];
    }
  for (int k = 0; k < 3; ++k) {
    c.from_mean[k] /= static_cast<double>(kept.size());
    c.to_mean[k] /= static_cast<double>(kept.size());
  }
  for (std::size_t i : kept) {
    Point3 a, b;
    for (int k = 0; k < 3; ++k) {
      a[k] = pairs[i].from[k] - c.from_mean[k];
      b[k] = pairs[i].to[k] - c.to_mean[k];
    }
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) {
        c.from_from[r][k] += a[r] * a[k];
        c.from_to[r][k] += a[r] * b[k];
      }
  }
  return c;
}

// The linear part with the translation that maps the one centroid onto the other.
Matrix4 with_translation(const Matrix3& linear, const Centred& c) {
  Matrix4 m = identity4();
  for (int i = 0; i < 3; ++i) {
    m[i][3] = c.to_mean[i];
    for (int j = 0; j < 3; ++j) {
      m[i][j] = linear[i][j];
      m[i][3] -= linear[i][j] * c.from_mean[j];
    }
  }
  return m;
}

Matrix4 fit_rigid(const std::vector<PointPair>& pairs, const std::vector<std::size_t>& kept) {
  const Centred c = centre(pairs, kept);
  return with_translation(rotation_maximising_trace(c.from_to), c);
}

// The normal equations of the rows [x y z 1] with centred coordinates: the
// constant column separates out (its solution is the translation), leaving
// (sum a a^T) L^T = sum a b^T for the linear part L.
Matrix4 fit_affine(const std::vector<PointPair>& pairs, const std::vector<std::size_t>& kept) {
  const Centred c = centre(pairs, kept);
  Matrix3 linear_transposed = c.from_to;
  if (!solve_in_place(c.from_from, linear_transposed, 1e-10))
    throw std::runtime_error("affine fit: the " + std::to_string(kept.size()) +
                             " kept points are degenerate (coplanar or collinear), so the affine transform is not "
                             "determined; use a rigid fit or points spread in 3 dimensions");
  Matrix3 linear;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) linear[i][j] = linear_transposed[j][i];
  return with_translation(linear, c);
}

double squared_residual(const Matrix4& m, const PointPair& pair) {
  const Point3 p = transform_point(m, pair.from);
  double sum = 0;
  for (int k = 0; k < 3; ++k) sum += (p[k] - pair.to[k]) * (p[k] - pair.to[k]);
  return sum;
}

bool all_finite(const Matrix4& m) {
  for (const auto& row : m)
    for (double v : row)
      if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

Matrix4 identity4() {
  Matrix4 m{};
  for (int i = 0; i < 4; ++i) m[i][i] = 1;
  return m;
}

Matrix4 rotation_about(const Point3& axis, double degrees) {
  const double theta = degrees * std::numbers::pi / 180, co = std::cos(theta), si = std::sin(theta);
  const Point3& k = axis;
  const double cross[3][3] = {{0, -k[2], k[1]}, {k[2], 0, -k[0]}, {-k[1], k[0], 0}};
  Matrix4 m = identity4();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = (i == j ? co : 0.0) + si * cross[i][j] + (1 - co) * k[i] * k[j];
  return m;
}

Matrix4 multiply(const Matrix4& a, const Matrix4& b) {
  Matrix4 m{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) m[i][j] += a[i][k] * b[k][j];
  return m;
}

Matrix4 inverse(const Matrix4& m) {
  if (!all_finite(m)) throw std::runtime_error("inverse: the matrix has a non-finite entry");
  Matrix4 result = identity4();
  if (!solve_in_place(m, result, 1e-12)) throw std::runtime_error("inverse: the matrix is singular");
  return result;
}

Point3 transform_point(const Matrix4& m, const Point3& p) {
  Point3 out;
  for (int i = 0; i < 3; ++i) out[i] = m[i][0] * p[0] + m[i][1] * p[1] + m[i][2] * p[2] + m[i][3];
  return out;
}

FitResult fit_transform(const std::vector<PointPair>& pairs, TransformKind kind, double keep) {
  const std::size_t n = pairs.size();
  if (n < 4) throw std::runtime_error("fit_transform: " + std::to_string(n) + " point pairs, at least 4 are needed");
  if (!(keep > 0 && keep <= 1))
    throw std::runtime_error("fit_transform: keep must be in (0, 1], got " + std::to_string(keep));
  double scale = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(pairs[i].from[k]) || !std::isfinite(pairs[i].to[k]))
        throw std::runtime_error("fit_transform: point pair " + std::to_string(i) + " has a non-finite coordinate");
      scale = std::max({scale, std::abs(pairs[i].from[k]), std::abs(pairs[i].to[k])});
    }

  const auto fit = [&](const std::vector<std::size_t>& kept) {
    return kind == TransformKind::Rigid ? fit_rigid(pairs, kept) : fit_affine(pairs, kept);
  };
  // The small epsilon keeps e.g. 0.29 * 100 (28.999999999999996) from losing a pair.
  const auto count = std::clamp<std::size_t>(static_cast<std::size_t>(std::floor(keep * double(n) + 1e-9)), 4, n);
  std::vector<std::size_t> kept(n);
  std::iota(kept.begin(), kept.end(), std::size_t{0});
  FitResult result;
  result.transform = fit(kept);
  // With more exact matches than `count`, which of them are kept is decided by
  // rounding and may change with every refit: after the first trim, a new kept
  // set that lowers the trimmed sum of squares by no more than rounding
  // (residuals of 1e-10 of the coordinates' size, far below any real match
  // error) counts as no change.
  const double negligible = static_cast<double>(count) * (1e-10 * scale) * (1e-10 * scale);
  const auto trimmed_sum = [&](const std::vector<std::size_t>& set, const std::vector<double>& residual) {
    double sum = 0;
    for (std::size_t i : set) sum += residual[i];
    return sum;
  };
  std::vector<double> residual(n);
  std::vector<std::size_t> order(n);
  std::vector<char> chosen(n);
  for (int round = 0; round < 30; ++round) {
    for (std::size_t i = 0; i < n; ++i) residual[i] = squared_residual(result.transform, pairs[i]);
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Ties broken by index, so that the kept set (and the stopping test) is deterministic.
    const auto last = order.begin() + static_cast<std::ptrdiff_t>(count);
    std::nth_element(order.begin(), last - 1, order.end(), [&](std::size_t a, std::size_t b) {
      return std::pair(residual[a], a) < std::pair(residual[b], b);
    });
    // The kept set in index order (the fit sums in that order), by marking
    // rather than sorting: O(n) where a sort of the kept half took most of a round.
    std::fill(chosen.begin(), chosen.end(), char{0});
    for (auto it = order.begin(); it != last; ++it) chosen[*it] = 1;
    std::vector<std::size_t> next;
    next.reserve(count);
    for (std::size_t i = 0; i < n; ++i)
      if (chosen[i]) next.push_back(i);
    // Also settled: a new set that lowers the trimmed sum by under 1e-4 of
    // it. With noisy matches the set's margin churns for a dozen rounds that
    // move the transform by nothing that matters (55,000 block matches of a
    // brain: 12 rounds, 33 ms a fit, against 3-4 rounds).
    const double before = trimmed_sum(kept, residual);
    const bool settled =
        kept.size() == count && before - trimmed_sum(next, residual) <= std::max(negligible, 1e-4 * before);
    if (next == kept || settled) break;
    kept = std::move(next);
    result.transform = fit(kept);
    ++result.iterations;
  }
  for (std::size_t i : kept) residual[i] = squared_residual(result.transform, pairs[i]);
  result.inliers = kept.size();
  result.rms = std::sqrt(trimmed_sum(kept, residual) / static_cast<double>(kept.size()));
  return result;
}

// The rotation maximising trace(R^T M) is the polar decomposition's
// orthogonal factor whenever det M > 0, and the nearest proper rotation
// otherwise; it is Horn's problem with S = M^T.
double rotation_angle_between(const Matrix4& a, const Matrix4& b) {
  if (!all_finite(a) || !all_finite(b)) throw std::runtime_error("rotation_angle_between: a non-finite matrix");
  const auto closest_rotation = [](const Matrix4& m) {
    Matrix3 transposed;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) transposed[i][j] = m[j][i];
    return rotation_maximising_trace(transposed);
  };
  const Matrix3 ra = closest_rotation(a), rb = closest_rotation(b);
  Matrix3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) r[i][j] += ra[k][i] * rb[k][j];
  // atan2 of sine and cosine: acos of the trace alone loses all precision for
  // angles below about 1e-8 radians.
  const double sine = 0.5 * std::hypot(r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]);
  const double cosine = 0.5 * (r[0][0] + r[1][1] + r[2][2] - 1);
  return std::atan2(sine, cosine) * 180 / std::acos(-1.0);
}

std::string matrix_text(const Matrix4& m) {
  std::string out;
  for (const auto& row : m)
    for (int j = 0; j < 4; ++j) {
      char buffer[32];  // to_chars: locale independent, unlike printf
      const auto written = std::to_chars(buffer, buffer + sizeof buffer, row[j], std::chars_format::general, 17);
      out.append(buffer, written.ptr);
      out += j < 3 ? ' ' : '\n';
    }
  return out;
}

Matrix4 parse_matrix_text(const std::string& text, const std::string& what) {
  Matrix4 m{};
  int rows = 0, line_number = 0;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // Windows line ends
    const auto where = what + ": line " + std::to_string(line_number) + ": ";
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string token; words >> token;) tokens.push_back(token);
    if (tokens.empty()) continue;
    if (rows == 4) throw std::runtime_error(where + "more than 4 rows of a 4x4 matrix");
    if (tokens.size() != 4)
      throw std::runtime_error(where + "expected 4 numbers, found " + std::to_string(tokens.size()));
    for (int j = 0; j < 4; ++j) {
      const std::string& token = tokens[static_cast<std::size_t>(j)];
      const auto parsed = std::from_chars(token.data(), token.data() + token.size(), m[rows][j]);
      if (parsed.ec != std::errc() || parsed.ptr != token.data() + token.size() || !std::isfinite(m[rows][j]))
        throw std::runtime_error(where + "'" + token + "' is not a finite number");
    }
    ++rows;
    if (rows == 4 && (m[3][0] != 0 || m[3][1] != 0 || m[3][2] != 0 || m[3][3] != 1))
      throw std::runtime_error(where + "the last row of an affine matrix must be 0 0 0 1, found '" + line + "'");
  }
  if (rows != 4)
    throw std::runtime_error(what + ": expected 4 lines of 4 numbers (a 4x4 matrix), found " + std::to_string(rows));
  return m;
}

}  // namespace gi::reg
