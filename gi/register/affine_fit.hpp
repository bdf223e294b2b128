#pragma once
// Robust point-set registration for the affine pre-alignment (block matching,
// as NiftyReg's reg_aladin does it): each reference block centre is matched to
// a position in the floating image, giving pairs from -> to, and a rigid or
// affine transform is fitted to the pairs.
//
// Why least trimmed squares: block matches include outliers (blocks with no
// true match, occlusion, intensity changes), and a single far-off match pulls
// a plain least-squares fit anywhere. LTS fits, keeps the fraction of pairs
// that fit best, refits on those, and repeats; the outliers drop out.
//
// Matrices are row-major homogeneous 4x4 (last row 0 0 0 1) mapping a point
// p to M * [p 1], the convention of reg_aladin's affine text files.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace gi::reg {

using Matrix4 = std::array<std::array<double, 4>, 4>;  // row-major homogeneous, last row 0 0 0 1
using Point3 = std::array<double, 3>;

Matrix4 identity4();
Matrix4 multiply(const Matrix4& a, const Matrix4& b);  // a * b
// Throws std::runtime_error if m is singular (a pivot vanishes relative to the
// largest entry) or has a non-finite entry.
Matrix4 inverse(const Matrix4& m);
// m * (p, 1); the last row is assumed 0 0 0 1. (Not named `apply`: Matrix4
// and Point3 are std::arrays, so argument-dependent lookup would find
// std::apply as well.)
Point3 transform_point(const Matrix4& m, const Point3& p);
// The rotation by `degrees` about the unit vector `axis` (Rodrigues'
// formula), with no translation.
Matrix4 rotation_about(const Point3& axis, double degrees);

struct PointPair {
  Point3 from, to;
};

enum class TransformKind { Rigid, Affine };

struct FitResult {
  Matrix4 transform;        // T with T * from ~ to
  std::size_t inliers = 0;  // pairs kept in the final fit
  double rms = 0;           // root mean square residual |T from - to| over the kept pairs
  int iterations = 0;       // trimming rounds that changed the kept set and refitted (0 for keep = 1)
};

// Least trimmed squares: fit on all pairs, then repeatedly keep the fraction
// `keep` (0 < keep <= 1; floor(keep * n) pairs, at least 4) with the smallest
// residuals under the current fit and refit on them, until the kept set stops
// changing or after 30 rounds. A new kept set that lowers the trimmed sum of
// squares only by rounding (exact matches outnumbering the kept count) counts
// as no change.
// Rigid: rotation and translation (Horn 1987's closed-form quaternion method);
// always a proper rotation (det +1), even for reflected data.
// Affine: 12 parameters by linear least squares.
// Throws std::runtime_error when there are fewer than 4 pairs, keep is out of
// range, a coordinate is not finite, or (affine) the kept points are
// degenerate (coplanar or collinear).
FitResult fit_transform(const std::vector<PointPair>& pairs, TransformKind kind, double keep);

// The angle (degrees) of R_a^T R_b, R_a and R_b the closest rotations of the
// two matrices' linear parts (the polar decomposition's rotation; for a rigid
// matrix its own rotation; for det < 0 the nearest proper rotation). For
// tests and reports. Throws std::runtime_error for a non-finite matrix.
double rotation_angle_between(const Matrix4& a, const Matrix4& b);

// "r00 r01 r02 r03\n" and so on, 4 lines, 17 significant digits (reading the
// text back gives the same doubles), as reg_aladin writes its affine text
// file. The reader throws std::runtime_error naming `what` and the line when
// the text is not 4 lines of 4 finite numbers or the last row is not 0 0 0 1;
// blank lines are skipped.
std::string matrix_text(const Matrix4& m);
Matrix4 parse_matrix_text(const std::string& text, const std::string& what);

}  // namespace gi::reg
