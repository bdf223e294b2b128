// The robust point-set fits of the affine pre-alignment (gi/register/affine_fit.hpp):
// exact recovery of known rigid and affine transforms, outlier rejection by
// least trimmed squares, noise, degenerate and malformed input, and the
// reg_aladin-style matrix text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gi/register/affine_fit.hpp"

namespace {
using gi::reg::FitResult;
using gi::reg::Matrix4;
using gi::reg::Point3;
using gi::reg::PointPair;
using gi::reg::TransformKind;

// `degrees` about `axis` (normalised here), then `translation`.
Matrix4 rigid(Point3 axis, double degrees, Point3 translation) {
  const double length = std::hypot(axis[0], axis[1], axis[2]);
  for (double& a : axis) a /= length;
  Matrix4 m = gi::reg::rotation_about(axis, degrees);
  for (int i = 0; i < 3; ++i) m[i][3] = translation[i];
  return m;
}

std::vector<Point3> random_points(std::size_t n, unsigned seed, double side = 100) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, side);
  std::vector<Point3> points(n);
  for (auto& p : points) p = {u(rng), u(rng), u(rng)};
  return points;
}

std::vector<PointPair> pairs_under(const Matrix4& truth, const std::vector<Point3>& points) {
  std::vector<PointPair> pairs;
  for (const auto& p : points) pairs.push_back({p, gi::reg::transform_point(truth, p)});
  return pairs;
}

double distance(const Point3& a, const Point3& b) { return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); }

// How far two transforms move the same points apart (mm), over the points.
double max_point_error(const Matrix4& a, const Matrix4& b, const std::vector<Point3>& points) {
  double worst = 0;
  for (const auto& p : points) worst = std::max(worst, distance(gi::reg::transform_point(a, p), gi::reg::transform_point(b, p)));
  return worst;
}

double max_entry_difference(const Matrix4& a, const Matrix4& b) {
  double worst = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) worst = std::max(worst, std::abs(a[i][j] - b[i][j]));
  return worst;
}

double det3(const Matrix4& m) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// An affine map within 5% of the identity (scaling and shear) plus a translation.
Matrix4 random_affine(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> near(-0.05, 0.05), shift(-20, 20);
  Matrix4 m = gi::reg::identity4();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m[i][j] += near(rng);
    m[i][3] = shift(rng);
  }
  return m;
}

// Replaces `fraction` of the targets by wrong ones 20 to 60 mm from the truth.
std::vector<PointPair> with_outliers(std::vector<PointPair> pairs, double fraction, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::size_t> order(pairs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::normal_distribution<double> direction(0, 1);
  std::uniform_real_distribution<double> length(20, 60);
  const auto count = static_cast<std::size_t>(fraction * static_cast<double>(pairs.size()));
  for (std::size_t k = 0; k < count; ++k) {
    Point3 d = {direction(rng), direction(rng), direction(rng)};
    const double scale = length(rng) / std::hypot(d[0], d[1], d[2]);
    for (int i = 0; i < 3; ++i) pairs[order[k]].to[i] += scale * d[i];
  }
  return pairs;
}

void expect_runtime_error_containing(const std::function<void()>& f, const std::string& word) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << word << "'";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << "message: " << e.what();
  }
}

TEST(AffineFit, RigidRecoversRotationAndTranslation) {
  const Matrix4 truth = rigid({1, 2, 3}, 10, {12.5, -7.25, 3});
  const auto points = random_points(200, 1);
  const auto pairs = pairs_under(truth, points);
  const FitResult fit = gi::reg::fit_transform(pairs, TransformKind::Rigid, 1.0);
  EXPECT_LT(max_entry_difference(fit.transform, truth), 1e-6);
  EXPECT_LT(gi::reg::rotation_angle_between(fit.transform, truth), 1e-6);
  EXPECT_LT(fit.rms, 1e-9);
  EXPECT_EQ(fit.inliers, 200u);
  EXPECT_EQ(fit.iterations, 0);
  // Trimming clean data keeps the exact answer.
  const FitResult trimmed = gi::reg::fit_transform(pairs, TransformKind::Rigid, 0.8);
  EXPECT_LT(max_entry_difference(trimmed.transform, truth), 1e-6);
  EXPECT_EQ(trimmed.inliers, 160u);
}

TEST(AffineFit, AffineRecoversScalingAndShear) {
  const Matrix4 truth = random_affine(2);
  const auto points = random_points(200, 3);
  const auto pairs = pairs_under(truth, points);
  const FitResult fit = gi::reg::fit_transform(pairs, TransformKind::Affine, 1.0);
  EXPECT_LT(max_entry_difference(fit.transform, truth), 1e-9);
  EXPECT_LT(fit.rms, 1e-9);
  // A rigid fit cannot follow the scaling and shear: the test data need the affine fit.
  const FitResult rigid_fit = gi::reg::fit_transform(pairs, TransformKind::Rigid, 1.0);
  EXPECT_GT(max_point_error(rigid_fit.transform, truth, points), 0.1);
}

TEST(AffineFit, TrimmingRejectsOutliers) {
  const auto points = random_points(200, 4);
  for (const auto kind : {TransformKind::Rigid, TransformKind::Affine}) {
    SCOPED_TRACE(kind == TransformKind::Rigid ? "rigid" : "affine");
    const Matrix4 truth =
        kind == TransformKind::Rigid ? rigid({-0.3, 1, 0.4}, 7, {-4, 9, 15}) : random_affine(5);
    const auto pairs = with_outliers(pairs_under(truth, points), 0.3, 6);
    const FitResult robust = gi::reg::fit_transform(pairs, kind, 0.5);
    EXPECT_LT(max_point_error(robust.transform, truth, points), 1e-3);
    EXPECT_LT(max_entry_difference(robust.transform, truth), 1e-3);
    EXPECT_EQ(robust.inliers, 100u);
    EXPECT_LT(robust.rms, 1e-6);  // only true matches kept
    EXPECT_GE(robust.iterations, 1);
    EXPECT_LE(robust.iterations, 5);  // stops once the kept set settles, well before the 30-round cap
    const FitResult plain = gi::reg::fit_transform(pairs, kind, 1.0);
    EXPECT_GT(max_point_error(plain.transform, truth, points), 0.1);
    EXPECT_EQ(plain.inliers, 200u);
  }
}

// A second object moving differently (40% of the pairs, turned 20 degrees
// about the cube's centre): the plain fit lands between the two motions, and
// its residuals do not yet separate them (near the centre the two agree), so
// the first trimmed set still holds some of the other object's pairs. Only
// further rounds reach the exact answer.
TEST(AffineFit, TrimmingIteratesUntilTheKeptSetSettles) {
  const auto points = random_points(200, 18);
  const Matrix4 truth = rigid({0, 0, 1}, 5, {3, -2, 0});
  const Matrix4 about_centre = gi::reg::multiply(
      rigid({0, 0, 1}, 20, {50, 50, 50}), rigid({1, 0, 0}, 0, {-50, -50, -50}));  // translate, turn, translate back
  const Matrix4 other = gi::reg::multiply(about_centre, truth);
  std::vector<PointPair> pairs = pairs_under(truth, points);
  for (std::size_t i = 0; i < 80; ++i) pairs[i].to = gi::reg::transform_point(other, points[i]);
  for (const auto kind : {TransformKind::Rigid, TransformKind::Affine}) {
    SCOPED_TRACE(kind == TransformKind::Rigid ? "rigid" : "affine");
    const FitResult fit = gi::reg::fit_transform(pairs, kind, 0.5);
    EXPECT_LT(max_point_error(fit.transform, truth, points), 1e-6);
    EXPECT_GE(fit.iterations, 2);
    EXPECT_LT(fit.iterations, 30);
  }
}

TEST(AffineFit, RigidFitUnderGaussianNoise) {
  const Matrix4 truth = rigid({0.2, -1, 0.7}, 12, {5, 6, -8});
  const auto points = random_points(1000, 7);
  auto pairs = pairs_under(truth, points);
  std::mt19937 rng(8);
  std::normal_distribution<double> noise(0, 0.5);
  for (auto& pair : pairs)
    for (double& v : pair.to) v += noise(rng);
  const FitResult fit = gi::reg::fit_transform(pairs, TransformKind::Rigid, 1.0);
  EXPECT_LT(distance({fit.transform[0][3], fit.transform[1][3], fit.transform[2][3]},
                     {truth[0][3], truth[1][3], truth[2][3]}),
            0.1);
  EXPECT_LT(gi::reg::rotation_angle_between(fit.transform, truth), 0.1);
  // 3D residual of sigma 0.5 per axis: rms about 0.5 * sqrt(3).
  EXPECT_NEAR(fit.rms, 0.5 * std::sqrt(3.0), 0.06);
}

TEST(AffineFit, RigidFitIsAProperRotationForReflectedData) {
  Matrix4 reflected_shear = random_affine(9);
  for (int j = 0; j < 4; ++j) reflected_shear[0][j] = -reflected_shear[0][j];  // mirror x
  ASSERT_LT(det3(reflected_shear), 0);
  const auto pairs = pairs_under(reflected_shear, random_points(200, 10));
  const FitResult fit = gi::reg::fit_transform(pairs, TransformKind::Rigid, 1.0);
  const Matrix4& r = fit.transform;
  EXPECT_NEAR(det3(r), 1.0, 1e-9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double dot = r[0][i] * r[0][j] + r[1][i] * r[1][j] + r[2][i] * r[2][j];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-9) << i << "," << j;
    }
  EXPECT_EQ(r[3][0], 0);
  EXPECT_EQ(r[3][3], 1);
}

TEST(AffineFit, CoplanarPointsFitRigidButNotAffine) {
  auto points = random_points(50, 11);
  for (auto& p : points) p[2] = 0;
  const Matrix4 truth = rigid({1, 1, 0}, 15, {1, 2, 3});
  const auto pairs = pairs_under(truth, points);
  const FitResult fit = gi::reg::fit_transform(pairs, TransformKind::Rigid, 1.0);
  EXPECT_LT(max_entry_difference(fit.transform, truth), 1e-6);
  expect_runtime_error_containing([&] { gi::reg::fit_transform(pairs, TransformKind::Affine, 1.0); }, "coplanar");
  // A tilted plane (not axis-aligned, with rounding in every coordinate) too.
  auto tilted = random_points(50, 12);
  for (auto& p : tilted) p[2] = 0.3 * p[0] - 0.7 * p[1] + 5;
  const auto tilted_pairs = pairs_under(truth, tilted);
  expect_runtime_error_containing([&] { gi::reg::fit_transform(tilted_pairs, TransformKind::Affine, 1.0); },
                                  "degenerate");
}

TEST(AffineFit, RejectsBadInput) {
  const auto pairs = pairs_under(gi::reg::identity4(), random_points(10, 13));
  const std::vector<PointPair> three(pairs.begin(), pairs.begin() + 3);
  for (const auto kind : {TransformKind::Rigid, TransformKind::Affine}) {
    expect_runtime_error_containing([&] { gi::reg::fit_transform(three, kind, 1.0); }, "at least 4");
    expect_runtime_error_containing([&] { gi::reg::fit_transform(pairs, kind, 0.0); }, "keep");
    expect_runtime_error_containing([&] { gi::reg::fit_transform(pairs, kind, 1.5); }, "keep");
    expect_runtime_error_containing([&] { gi::reg::fit_transform(pairs, kind, std::nan("")); }, "keep");
    auto with_nan = pairs;
    with_nan[4].to[1] = std::numeric_limits<double>::quiet_NaN();
    expect_runtime_error_containing([&] { gi::reg::fit_transform(with_nan, kind, 1.0); }, "non-finite");
    auto with_inf = pairs;
    with_inf[2].from[0] = std::numeric_limits<double>::infinity();
    expect_runtime_error_containing([&] { gi::reg::fit_transform(with_inf, kind, 1.0); }, "pair 2");
  }
  // Four pairs are enough, and a tiny keep still keeps four.
  EXPECT_EQ(gi::reg::fit_transform(pairs, TransformKind::Affine, 0.01).inliers, 4u);
  // The kept count is floor(keep * n), and 0.29 * 100 (28.999999999999996 in doubles) keeps 29.
  EXPECT_EQ(gi::reg::fit_transform(pairs, TransformKind::Affine, 0.55).inliers, 5u);
  const auto hundred = pairs_under(gi::reg::identity4(), random_points(100, 19));
  EXPECT_EQ(gi::reg::fit_transform(hundred, TransformKind::Affine, 0.29).inliers, 29u);
}

TEST(AffineFit, InverseAndMultiplyRoundTrip) {
  const Matrix4 a = gi::reg::multiply(rigid({3, -1, 2}, 40, {30, -10, 5}), random_affine(14));
  const Matrix4 b = random_affine(15);
  EXPECT_LT(max_entry_difference(gi::reg::multiply(a, gi::reg::inverse(a)), gi::reg::identity4()), 1e-12);
  EXPECT_LT(max_entry_difference(gi::reg::multiply(gi::reg::inverse(a), a), gi::reg::identity4()), 1e-12);
  EXPECT_LT(max_entry_difference(gi::reg::inverse(gi::reg::inverse(a)), a), 1e-12);
  for (const auto& p : random_points(20, 16)) {
    EXPECT_LT(distance(gi::reg::transform_point(gi::reg::inverse(a), gi::reg::transform_point(a, p)), p), 1e-12);
    EXPECT_LT(distance(gi::reg::transform_point(gi::reg::multiply(a, b), p), gi::reg::transform_point(a, gi::reg::transform_point(b, p))), 1e-12);
  }
  EXPECT_NE(max_entry_difference(gi::reg::multiply(a, b), gi::reg::multiply(b, a)), 0.0);  // the order matters
  Matrix4 singular = a;
  for (int j = 0; j < 4; ++j) singular[2][j] = 2 * singular[0][j] - singular[1][j];
  singular[2][3] = 0;  // rows 0..2 of the linear part dependent
  singular[3] = {0, 0, 0, 1};
  expect_runtime_error_containing([&] { gi::reg::inverse(singular); }, "singular");
  Matrix4 not_finite = a;
  not_finite[1][2] = std::numeric_limits<double>::infinity();
  expect_runtime_error_containing([&] { gi::reg::inverse(not_finite); }, "non-finite");
}

TEST(AffineFit, RotationAngleBetweenUsesTheClosestRotation) {
  const Matrix4 r10 = rigid({1, 2, 3}, 10, {0, 0, 0});
  EXPECT_NEAR(gi::reg::rotation_angle_between(gi::reg::identity4(), r10), 10.0, 1e-9);
  EXPECT_NEAR(gi::reg::rotation_angle_between(r10, gi::reg::identity4()), 10.0, 1e-9);
  EXPECT_NEAR(gi::reg::rotation_angle_between(rigid({0, 0, 1}, 25, {7, 8, 9}), rigid({0, 0, 1}, -5, {})), 30.0, 1e-9);
  // R * S with S symmetric positive definite: the polar decomposition's rotation is R.
  const Matrix4 stretch = {{{1.05, 0.02, 0.01, 0}, {0.02, 0.97, -0.03, 0}, {0.01, -0.03, 1.02, 0}, {0, 0, 0, 1}}};
  EXPECT_NEAR(gi::reg::rotation_angle_between(gi::reg::multiply(r10, stretch), r10), 0.0, 1e-9);
  EXPECT_NEAR(gi::reg::rotation_angle_between(gi::reg::multiply(r10, stretch), gi::reg::identity4()), 10.0, 1e-9);
}

TEST(AffineFit, MatrixTextRoundTripsExactly) {
  Matrix4 m = gi::reg::multiply(rigid({1, -2, 0.5}, 33, {1.0 / 3, -123456.789, 1e-17}), random_affine(17));
  m[0][1] = -0.0;
  const std::string text = gi::reg::matrix_text(m);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  EXPECT_EQ(text.substr(text.size() - 8), "0 0 0 1\n");
  const Matrix4 back = gi::reg::parse_matrix_text(text, "ref_to_flo.txt");
  EXPECT_EQ(std::memcmp(&back, &m, sizeof m), 0) << text;  // bit-identical, the sign of -0 included
  // reg_aladin's files: trailing spaces, Windows line ends, a blank last line.
  const Matrix4 loose =
      gi::reg::parse_matrix_text("1 0 0 2.5 \r\n0 1 0 -3\r\n0 0 1 4e1\r\n0 0 0 1\r\n\n", "aladin.txt");
  EXPECT_EQ(loose[0][3], 2.5);
  EXPECT_EQ(loose[1][3], -3);
  EXPECT_EQ(loose[2][3], 40);
}

TEST(AffineFit, ParseMatrixTextNamesTheFileAndLine) {
  const std::string what = "affine_ref_flo.txt";
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text("1 0 0 0\n0 1 0 0\n0 0 1 0\n", what); }, what);
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text("1 0 0 0\n0 1 0 0\n0 0 1 0\n", what); },
                                  "found 3");
  const std::string word = "1 0 0 0\n0 1 zero 0\n0 0 1 0\n0 0 0 1\n";
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text(word, what); }, what + ": line 2");
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text(word, what); }, "'zero'");
  const std::string last_row = "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0.5 1\n";
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text(last_row, what); }, what + ": line 4");
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text(last_row, what); }, "0 0 0 1");
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text("1 0 0 0\n0 1 0 0 7\n", what); },
                                  "line 2: expected 4 numbers, found 5");
  expect_runtime_error_containing([&] { gi::reg::parse_matrix_text("1 0 0 inf\n0 1 0 0\n0 0 1 0\n0 0 0 1\n", what); },
                                  "not a finite number");
  expect_runtime_error_containing(
      [&] { gi::reg::parse_matrix_text("1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n1 0 0 0\n", what); }, "line 5");
}

}  // namespace
