// Accuracy of displacement fields against a truth (gi/register/accuracy.hpp):
// percentiles, error statistics, folding, field comparison and the elastix
// (ITK LPS millimetre) conversion, on small hand-built fields.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "gi/register/accuracy.hpp"
#include "gi/register/test_pair.hpp"

namespace {
using gi::reg::Volume;

Volume field(int n, float fill = 0.0f) {
  Volume f;
  f.dim = {n, n, n};
  f.components = 3;
  f.data.assign(3 * f.voxels(), fill);
  return f;
}

Volume mask_all(int n, float value = 1.0f) {
  Volume m;
  m.dim = {n, n, n};
  m.data.assign(m.voxels(), value);
  return m;
}

// A smooth truth of at most ~1 voxel: no folding.
Volume smooth_truth(int n) {
  Volume t = gi::reg::smooth_random_field({n, n, n}, 3.0, 11);
  for (float& x : t.data) x *= 0.3f;
  return t;
}

TEST(Accuracy, PercentileIsNearestRank) {
  const std::vector<float> twenty = [] {
    std::vector<float> v;
    for (int i = 1; i <= 20; ++i) v.push_back(float(i));
    return v;
  }();
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 0), 1);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 5), 1);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 5.1), 2);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 50), 10);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 95), 19);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 99), 20);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(twenty, 100), 20);
  const std::vector<float> five = {15, 20, 35, 40, 50};  // the textbook example
  EXPECT_EQ(gi::reg::percentile_nearest_rank(five, 30), 20);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(five, 40), 20);
  EXPECT_EQ(gi::reg::percentile_nearest_rank(five, 50), 35);
  EXPECT_THROW(gi::reg::percentile_nearest_rank({}, 50), std::invalid_argument);
  EXPECT_THROW(gi::reg::percentile_nearest_rank(five, 101), std::invalid_argument);
  const gi::reg::Summary s = gi::reg::summarise({3, 1, 2, 4});  // unsorted input
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_EQ(s.median, 2);
  EXPECT_EQ(s.p95, 4);
  EXPECT_EQ(s.max, 4);
}

TEST(Accuracy, TruthAgainstItselfIsExactWithoutFolding) {
  const Volume t = smooth_truth(24);
  const gi::reg::AccuracyReport r = gi::reg::measure_accuracy(t, t, mask_all(24));
  EXPECT_EQ(r.mask_voxels, t.voxels());
  EXPECT_EQ(r.error.max, 0.0);
  EXPECT_EQ(r.error.mean, 0.0);
  EXPECT_EQ(r.folded, 0u);
  EXPECT_EQ(r.folded_fraction_in_mask, 0.0);
  EXPECT_GT(r.min_jacobian, 0.0);
  EXPECT_GT(r.truth_length.mean, 0.1);  // a real field, so the zero error means something
  EXPECT_DOUBLE_EQ(r.truth_length.mean, r.estimated_length.mean);
}

TEST(Accuracy, ConstantOffsetGivesThatErrorEverywhereInTheMask) {
  const Volume t = smooth_truth(24);
  Volume e = t;
  const std::size_t n = t.voxels();
  for (std::size_t v = 0; v < n; ++v) e.data[v] += 0.3f, e.data[n + v] += 0.4f;  // |(0.3, 0.4, 0)| = 0.5
  // Half the image (z < 12) masked out.
  Volume m = mask_all(24);
  for (std::size_t v = 0; v < n / 2; ++v) m.data[v] = 0;
  const gi::reg::AccuracyReport r = gi::reg::measure_accuracy(e, t, m);
  EXPECT_EQ(r.mask_voxels, n - n / 2);
  EXPECT_NEAR(r.error.mean, 0.5, 1e-5);
  EXPECT_NEAR(r.error.median, 0.5, 1e-5);
  EXPECT_NEAR(r.error.p99, 0.5, 1e-5);
  EXPECT_NEAR(r.error.max, 0.5, 1e-5);
  EXPECT_EQ(r.folded, 0u);  // an offset leaves the gradient as it was
  // A huge error outside the mask does not count.
  for (std::size_t v = 0; v < n / 2; ++v) e.data[2 * n + v] += 100;
  const gi::reg::AccuracyReport outside = gi::reg::measure_accuracy(e, t, m);
  EXPECT_NEAR(outside.error.max, 0.5, 1e-5);
  EXPECT_NEAR(outside.error.mean, 0.5, 1e-5);
}

TEST(Accuracy, ReflectedSlabFolds) {
  // u_x = 2 (15 - x) for x in [10, 20]: x -> 30 - x, a mirror image. Central
  // differences give 1 + du/dx = -1 at x = 11..19 and +5 at the slab's edges.
  const int n = 32;
  Volume e = field(n);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 10; x <= 20; ++x) e.at(x, y, z, 0) = float(2 * (15 - x));
  Volume m = mask_all(n, 0.0f);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < 16; ++x) m.at(x, y, z) = 1;  // x < 16: folded at 11..15
  const gi::reg::AccuracyReport r = gi::reg::measure_accuracy(e, field(n), m);
  EXPECT_EQ(r.folded, 9u * n * n);
  EXPECT_DOUBLE_EQ(r.folded_fraction, 9.0 / n);
  EXPECT_EQ(r.folded_in_mask, 5u * n * n);
  EXPECT_DOUBLE_EQ(r.folded_fraction_in_mask, 5.0 / 16);
  EXPECT_NEAR(r.min_jacobian, -1.0, 1e-6);
  EXPECT_NEAR(r.error.max, 10.0, 1e-6);
}

TEST(Accuracy, JacobianOfALinearFieldIsExactUpToTheBorders) {
  // u = M x: det(I + M) at every voxel, borders included (one-sided differences are exact on a line).
  const double M[3][3] = {{0.1, -0.2, 0.05}, {0.3, -0.1, 0.0}, {0.0, 0.2, 0.4}};
  Volume f;
  f.dim = {5, 6, 7};
  f.components = 3;
  f.data.resize(3 * f.voxels());
  for (int z = 0; z < 7; ++z)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 5; ++x)
        for (int c = 0; c < 3; ++c) f.at(x, y, z, c) = float(M[c][0] * x + M[c][1] * y + M[c][2] * z);
  const double a[3][3] = {{1.1, -0.2, 0.05}, {0.3, 0.9, 0.0}, {0.0, 0.2, 1.4}};
  const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  for (float d : gi::reg::jacobian_determinants(f)) ASSERT_NEAR(d, det, 1e-5);
}

TEST(Accuracy, CompareFieldsGivesPercentilesOfTheDifferenceInTheMask) {
  const int n = 10;
  const Volume a = smooth_truth(n);
  Volume b = a;
  Volume m = mask_all(n);
  const std::size_t voxels = a.voxels();
  // Outside the mask: the first 100 voxels, differing by 50. Inside: 450 voxels by 1, 450 by 3.
  for (std::size_t v = 0; v < voxels; ++v) {
    if (v < 100) m.data[v] = 0;
    b.data[2 * voxels + v] += v < 100 ? 50.0f : v < 550 ? 1.0f : 3.0f;
  }
  const gi::reg::FieldComparison c = gi::reg::compare_fields(a, b, m);
  EXPECT_EQ(c.mask_voxels, 900u);
  EXPECT_NEAR(c.p50, 1.0, 1e-5);
  EXPECT_NEAR(c.p99, 3.0, 1e-5);
  EXPECT_NEAR(c.max, 3.0, 1e-5);
  EXPECT_NEAR(c.mean, 2.0, 1e-5);
}

TEST(Accuracy, MismatchedFieldsAreRejected) {
  EXPECT_THROW(gi::reg::measure_accuracy(field(8), field(9), mask_all(8)), std::invalid_argument);
  EXPECT_THROW(gi::reg::measure_accuracy(field(8), field(8), mask_all(9)), std::invalid_argument);
  Volume scalar = mask_all(8);
  EXPECT_THROW(gi::reg::measure_accuracy(scalar, field(8), mask_all(8)), std::invalid_argument);
  EXPECT_THROW(gi::reg::compare_fields(field(8), field(7), mask_all(8)), std::invalid_argument);
}

TEST(Accuracy, ElastixLpsMillimetresBecomeVoxels) {
  // Identity geometry: LPS (1, 2, 3) mm is RAS (-1, -2, 3) mm, i.e. that many voxels.
  Volume d = field(2);
  const std::size_t n = d.voxels();
  for (std::size_t v = 0; v < n; ++v) d.data[v] = 1, d.data[n + v] = 2, d.data[2 * n + v] = 3;
  const std::array<std::array<double, 4>, 4> identity{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
  const Volume out = gi::reg::elastix_lps_mm_to_voxels(d, identity);
  EXPECT_EQ(out.at(1, 1, 1, 0), -1.0f);
  EXPECT_EQ(out.at(1, 1, 1, 1), -2.0f);
  EXPECT_EQ(out.at(1, 1, 1, 2), 3.0f);

  // An oblique, anisotropic, flipped, permuted geometry: build the LPS field
  // from known voxel displacements by hand, d_lps = diag(-1, -1, 1) A d_vox,
  // and get those back.
  const std::array<std::array<double, 4>, 4> A{
      {{-2.0, 0.1, 0.0, 90}, {0.0, 0.0, 1.5, -126}, {0.2, 3.0, 0.0, -72}, {0, 0, 0, 1}}};
  Volume vox = field(6), lps = field(6);
  const std::size_t m = vox.voxels();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-4, 4);
  for (float& x : vox.data) x = u(rng);
  for (std::size_t v = 0; v < m; ++v)
    for (int r = 0; r < 3; ++r) {
      double ras = 0;
      for (int c = 0; c < 3; ++c) ras += A[r][c] * vox.data[c * m + v];
      lps.data[r * m + v] = float(r < 2 ? -ras : ras);
    }
  const Volume back = gi::reg::elastix_lps_mm_to_voxels(lps, A);
  ASSERT_EQ(back.dim, vox.dim);
  for (std::size_t i = 0; i < vox.data.size(); ++i) ASSERT_NEAR(back.data[i], vox.data[i], 1e-4) << i;

  std::array<std::array<double, 4>, 4> singular = identity;
  singular[2][2] = 0;
  EXPECT_THROW(gi::reg::elastix_lps_mm_to_voxels(lps, singular), std::invalid_argument);
}

// error_mm = |L (estimated - truth)|, L the linear part of the truth's
// voxel_to_world: voxels of 1, 2 and 3 mm along x, y and z, by hand.
TEST(Accuracy, ErrorInMillimetresUsesTheReferenceVoxelSizes) {
  const int n = 10;
  Volume t = smooth_truth(n);
  Volume e = t;
  const std::size_t voxels = t.voxels();
  // Half the voxels off by (0.3, 0.4, 0.5) voxels: (0.3, 0.8, 1.5) mm, |.| = sqrt(2.98);
  // the other half by (0, 0, 1) voxel: 3 mm.
  for (std::size_t v = 0; v < voxels; ++v) {
    if (v < voxels / 2) {
      e.data[v] += 0.3f, e.data[voxels + v] += 0.4f, e.data[2 * voxels + v] += 0.5f;
    } else {
      e.data[2 * voxels + v] += 1.0f;
    }
  }
  const double first = std::sqrt(0.3 * 0.3 + 0.8 * 0.8 + 1.5 * 1.5);
  t.voxel_to_world = {{{1, 0, 0, -5}, {0, 2, 0, 7}, {0, 0, 3, 11}, {0, 0, 0, 1}}};
  t.spacing = {1, 2, 3};
  const gi::reg::AccuracyReport r = gi::reg::measure_accuracy(e, t, mask_all(n));
  EXPECT_NEAR(r.error_mm.mean, (first + 3.0) / 2, 1e-5);
  EXPECT_NEAR(r.error_mm.median, first, 1e-5);
  EXPECT_NEAR(r.error_mm.max, 3.0, 1e-5);
  EXPECT_EQ(r.error_mm.count, voxels);
  EXPECT_NEAR(r.error.mean, (std::sqrt(0.5) + 1.0) / 2, 1e-5);  // the voxel error is as it was
  EXPECT_NEAR(r.error.max, 1.0, 1e-5);
  // A rotation of the axes (here 90 degrees, x <-> y, one flipped) keeps lengths.
  t.voxel_to_world = {{{0, -2, 0, 0}, {1, 0, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, 1}}};
  const gi::reg::AccuracyReport rotated = gi::reg::measure_accuracy(e, t, mask_all(n));
  EXPECT_NEAR(rotated.error_mm.mean, (first + 3.0) / 2, 1e-5);
  EXPECT_NEAR(rotated.error_mm.max, 3.0, 1e-5);
  // 1 mm voxels: mm = voxels.
  t.voxel_to_world = {{{1, 0, 0, -90}, {0, 1, 0, -126}, {0, 0, 1, -72}, {0, 0, 0, 1}}};
  const gi::reg::AccuracyReport unit = gi::reg::measure_accuracy(e, t, mask_all(n));
  EXPECT_DOUBLE_EQ(unit.error_mm.mean, unit.error.mean);
  EXPECT_DOUBLE_EQ(unit.error_mm.max, unit.error.max);
  const nlohmann::json j = gi::reg::to_json(r);
  EXPECT_EQ(j["error_in_mask_mm"]["max"], r.error_mm.max);
  EXPECT_EQ(j["error_in_mask"]["max"], r.error.max);
}

}  // namespace
