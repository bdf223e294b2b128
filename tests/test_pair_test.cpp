// The registration test pairs (gi/register/test_pair.hpp) on small synthetic
// volumes, and the default Colin27 pair when Debian's mricron-data is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <stdexcept>
#include <string>

#include "gi/register/accuracy.hpp"
#include "gi/register/affine_fit.hpp"
#include "gi/register/test_pair.hpp"

namespace {
using gi::reg::Matrix4;
using gi::reg::PairOptions;
using gi::reg::Point3;
using gi::reg::TestPair;
using gi::reg::Volume;
namespace fs = std::filesystem;

// A 32^3 "head": a bright ellipsoidal blob with an inner structure and an
// intensity ramp, so that a displacement changes the image; brain = inner part.
struct Blob {
  Volume image, brain;
};
Blob make_blob(int n = 32) {
  Blob b;
  b.image.dim = b.brain.dim = {n, n, n};
  b.image.data.assign(b.image.voxels(), 0.0f);
  b.brain.data.assign(b.brain.voxels(), 0.0f);
  const double c = (n - 1) / 2.0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const double r2 = ((x - c) * (x - c) + (y - c) * (y - c) * 1.3 + (z - c) * (z - c) * 0.8) / (c * c);
        const float v = float(r2 < 0.8 ? 100 + 40 * std::sin(x * 0.5) * std::cos(y * 0.3) + z : 10);
        b.image.at(x, y, z) = v;
        b.brain.at(x, y, z) = r2 < 0.5 ? v : 0.0f;
      }
  return b;
}

// Options for a 32^3 volume: a field smooth at this scale.
PairOptions small_options() {
  PairOptions o;
  o.sigma = 4;
  o.low_frequency_sigma = 12;
  o.max_displacement = 2;
  return o;
}

double length(const Volume& f, std::size_t v) {
  const std::size_t n = f.voxels();
  return std::sqrt(double(f.data[v]) * f.data[v] + double(f.data[n + v]) * f.data[n + v] +
                   double(f.data[2 * n + v]) * f.data[2 * n + v]);
}

TEST(TestPair, ZeroDisplacementWithoutNoiseOrBiasGivesTheImageItself) {
  const Blob b = make_blob();
  PairOptions o = small_options();
  o.max_displacement = 0;
  o.noise = 0;
  o.bias = 0;
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  EXPECT_EQ(p.reference.data, b.image.data);  // cubic convolution interpolates: exact at voxel centres
  EXPECT_EQ(p.floating.data, b.image.data);
  for (float x : p.truth.data) ASSERT_EQ(x, 0.0f);
  for (std::size_t v = 0; v < b.brain.voxels(); ++v) ASSERT_EQ(p.mask.data[v], b.brain.data[v] > 0 ? 1.0f : 0.0f);
  EXPECT_EQ(p.stats.max_displacement, 0.0);
}

TEST(TestPair, ZeroDisplacementDiffersOnlyByNoiseAndBias) {
  const Blob b = make_blob();
  PairOptions o = small_options();
  o.max_displacement = 0;
  o.noise = 0.02;
  o.bias = 0.1;
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  // Intensity range inside the brain of the blob; noise sigma is 2% of it.
  EXPECT_NEAR(p.stats.noise_sigma, 0.02 * p.stats.intensity_range, 1e-9);
  // floating - image is pure noise of that sigma.
  double sum = 0, sum2 = 0;
  const std::size_t n = b.image.voxels();
  for (std::size_t v = 0; v < n; ++v) {
    const double d = p.floating.data[v] - b.image.data[v];
    sum += d;
    sum2 += d * d;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.05 * p.stats.noise_sigma);
  EXPECT_NEAR(std::sqrt(sum2 / n), p.stats.noise_sigma, 0.03 * p.stats.noise_sigma);
  // Without noise the reference is the image times a bias within exp(+-0.1), reaching it somewhere.
  o.noise = 0;
  const TestPair q = gi::reg::make_test_pair(b.image, b.brain, o);
  double most = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const double log_ratio = std::log(q.reference.data[v] / b.image.data[v]);
    ASSERT_LE(std::abs(log_ratio), 0.1 + 1e-5);
    most = std::max(most, std::abs(log_ratio));
  }
  EXPECT_NEAR(most, 0.1, 1e-4);
}

TEST(TestPair, TruthMaxInsideTheMaskIsMaxDisplacementAndDoesNotFold) {
  const Blob b = make_blob();
  const PairOptions o = small_options();
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  double most = 0, sum = 0;
  std::size_t count = 0;
  for (std::size_t v = 0; v < p.mask.voxels(); ++v)
    if (p.mask.data[v] > 0.5f) {
      most = std::max(most, length(p.truth, v));
      sum += length(p.truth, v);
      ++count;
    }
  EXPECT_NEAR(most, o.max_displacement, 1e-4);
  EXPECT_NEAR(p.stats.max_displacement, o.max_displacement, 1e-4);
  EXPECT_NEAR(p.stats.mean_displacement, sum / count, 1e-4);
  EXPECT_EQ(p.stats.brain_voxels, count);
  EXPECT_GT(p.stats.mean_displacement, 0.2 * o.max_displacement);  // a real deformation, not a few peaks
  EXPECT_GT(p.stats.min_jacobian, 0.0);
  const std::vector<float> det = gi::reg::jacobian_determinants(p.truth);
  EXPECT_NEAR(*std::min_element(det.begin(), det.end()), p.stats.min_jacobian, 1e-6);
}

TEST(TestPair, ReferenceIsTheImageAtXPlusU) {
  // On a linear ramp cubic convolution is exact, so reference(x) = x + u_x(x)
  // wherever x + u stays two voxels off the border: the sign of the convention.
  Blob b = make_blob();
  for (int z = 0; z < 32; ++z)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x) b.image.at(x, y, z) = float(x);
  PairOptions o = small_options();
  o.noise = 0;
  o.bias = 0;
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  int checked = 0;
  for (int z = 0; z < 32; ++z)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x) {
        const double px = x + p.truth.at(x, y, z, 0);
        if (px < 2 || px > 29 || y + p.truth.at(x, y, z, 1) < 2 || z + p.truth.at(x, y, z, 2) < 2 ||
            y + p.truth.at(x, y, z, 1) > 29 || z + p.truth.at(x, y, z, 2) > 29)
          continue;
        ASSERT_NEAR(p.reference.at(x, y, z), px, 1e-4) << x << " " << y << " " << z;
        ++checked;
      }
  EXPECT_GT(checked, 10000);
}

TEST(TestPair, SameSeedSamePairAnotherSeedAnother) {
  const Blob b = make_blob();
  PairOptions o = small_options();
  const TestPair p1 = gi::reg::make_test_pair(b.image, b.brain, o);
  const TestPair p2 = gi::reg::make_test_pair(b.image, b.brain, o);
  EXPECT_EQ(p1.truth.data, p2.truth.data);
  EXPECT_EQ(p1.reference.data, p2.reference.data);
  EXPECT_EQ(p1.floating.data, p2.floating.data);
  EXPECT_EQ(p1.mask.data, p2.mask.data);
  o.seed = 2;
  const TestPair p3 = gi::reg::make_test_pair(b.image, b.brain, o);
  EXPECT_NE(p1.truth.data, p3.truth.data);
  EXPECT_NE(p1.reference.data, p3.reference.data);
  EXPECT_NE(p1.floating.data, p3.floating.data);
}

TEST(TestPair, SmoothFieldHasUnitVarianceAndIsSmooth) {
  const std::array<int, 3> dim{48, 48, 48};
  const Volume f = gi::reg::smooth_random_field(dim, 2.0, 7);
  const Volume white = gi::reg::smooth_random_field(dim, 0.0, 7);
  ASSERT_EQ(f.components, 3);
  auto stats = [&](const Volume& g, int c, double& var, double& lag1) {
    double s = 0, s2 = 0, sl = 0;
    std::size_t nl = 0;
    for (int z = 0; z < dim[2]; ++z)
      for (int y = 0; y < dim[1]; ++y)
        for (int x = 0; x < dim[0]; ++x) {
          const double v = g.at(x, y, z, c);
          s += v;
          s2 += v * v;
          if (x + 1 < dim[0]) sl += v * g.at(x + 1, y, z, c), ++nl;
        }
    const double n = double(g.voxels()), mean = s / n;
    var = s2 / n - mean * mean;
    lag1 = (sl / nl - mean * mean) / var;
  };
  for (int c = 0; c < 3; ++c) {
    double var, lag1;
    stats(f, c, var, lag1);
    EXPECT_NEAR(var, 1.0, 0.3) << c;
    EXPECT_NEAR(lag1, std::exp(-1.0 / (4 * 2.0 * 2.0)), 0.05) << c;  // Gaussian autocorrelation at lag 1
    stats(white, c, var, lag1);
    EXPECT_NEAR(var, 1.0, 0.03) << c;
    EXPECT_NEAR(lag1, 0.0, 0.03) << c;
  }
}

TEST(TestPair, FoldingTruthIsRejected) {
  const Blob b = make_blob();
  PairOptions o = small_options();
  o.sigma = 1;
  o.low_frequency = 0;
  o.max_displacement = 6;  // rough field, large amplitude: folds
  try {
    gi::reg::make_test_pair(b.image, b.brain, o);
    FAIL() << "expected a folding error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("folds"), std::string::npos) << e.what();
  }
}

TEST(TestPair, BadInputIsRejected) {
  Blob b = make_blob();
  PairOptions o = small_options();
  o.max_displacement = -1;
  EXPECT_THROW(gi::reg::make_test_pair(b.image, b.brain, o), std::invalid_argument);
  o = small_options();
  std::fill(b.brain.data.begin(), b.brain.data.end(), 0.0f);
  EXPECT_THROW(gi::reg::make_test_pair(b.image, b.brain, o), std::invalid_argument);
  b = make_blob();
  b.brain.dim = {16, 16, 16};
  EXPECT_THROW(gi::reg::make_test_pair(b.image, b.brain, o), std::invalid_argument);
}

TEST(TestPair, JsonRecordsOptionsStatisticsAndSourceHashes) {
  const Blob b = make_blob();
  const PairOptions o = small_options();
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  const fs::path dir = fs::temp_directory_path() / ("gi_test_pair_json_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "image.nii") << "abc";  // the hash is of the file's bytes, whatever they are
  std::ofstream(dir / "brain.nii") << "";
  const nlohmann::json j = gi::reg::pair_json(p, o, dir / "image.nii", dir / "brain.nii");
  fs::remove_all(dir);
  EXPECT_EQ(j["seed"], o.seed);
  EXPECT_EQ(j["options"]["sigma_voxels"], o.sigma);
  EXPECT_EQ(j["truth_in_brain"]["max"], p.stats.max_displacement);
  EXPECT_EQ(j["truth_in_brain"]["mean"], p.stats.mean_displacement);
  EXPECT_EQ(j["min_jacobian"], p.stats.min_jacobian);
  EXPECT_EQ(j["sources"]["image"]["sha256"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(j["sources"]["brain"]["sha256"], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// The default pair from Colin27 (a few seconds): the registration's acceptance
// needs a mean truth displacement >= 2 voxels for a max of 6, and no folding.
TEST(TestPair, ColinDefaultPairMeetsTheAcceptanceNumbers) {
  const fs::path head = "/usr/share/mricron/templates/ch2.nii.gz", brain = "/usr/share/mricron/templates/ch2bet.nii.gz";
  if (!fs::exists(head) || !fs::exists(brain)) GTEST_SKIP() << "mricron-data is not installed";
  const Volume image = gi::reg::read_nifti(head), bet = gi::reg::read_nifti(brain);
  const TestPair p = gi::reg::make_test_pair(image, bet, PairOptions{});
  EXPECT_NEAR(p.stats.max_displacement, 6.0, 1e-4);
  EXPECT_GE(p.stats.mean_displacement, 2.0);
  EXPECT_GT(p.stats.min_jacobian, 0.0);
  EXPECT_GT(p.stats.brain_voxels, 1000000u);
}

// --- The affine pair (--affine) ---

// An oblique, flipped, anisotropic source geometry, so that the floating
// grid's axes and the world/voxel conversions are all exercised: 20 degrees
// about z, voxels of 1.2 (x flipped), 1.0 and 0.9 mm.
Matrix4 oblique_geometry() {
  const double c = std::cos(20 * std::numbers::pi / 180), s = std::sin(20 * std::numbers::pi / 180);
  return {{{-1.2 * c, -1.0 * s, 0, 20}, {-1.2 * s, 1.0 * c, 0, -15}, {0, 0, 0.9, -8}, {0, 0, 0, 1}}};
}

// A smooth 32^3 source on that geometry: sinusoids of 20-26 voxels' wavelength
// along every axis (so cubic interpolation is accurate at 1.5 mm, and any
// misplacement along any axis changes the value), brain = an inner ellipsoid.
Blob make_smooth_source(int n = 32) {
  Blob b = make_blob(n);
  for (Volume* v : {&b.image, &b.brain}) {
    v->voxel_to_world = oblique_geometry();
    v->spacing = {1.2, 1.0, 0.9};
  }
  const double c = (n - 1) / 2.0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const float v = float(100 + 20 * std::sin(x * 0.30 + 0.4) + 15 * std::cos(y * 0.25 - 0.3) +
                              10 * std::sin(z * 0.28 + 1.0) + 8 * std::sin((x + y - z) * 0.2));
        b.image.at(x, y, z) = v;
        const double r2 = ((x - c) * (x - c) + (y - c) * (y - c) * 1.3 + (z - c) * (z - c) * 0.8) / (c * c);
        b.brain.at(x, y, z) = r2 < 0.5 ? v : 0.0f;
      }
  return b;
}

PairOptions affine_options() {
  PairOptions o = small_options();
  o.affine = true;
  return o;
}

Point3 column(const Matrix4& m, int c) { return {m[0][c], m[1][c], m[2][c]}; }
double norm(const Point3& p) { return std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]); }

// Keys (a = -0.5) cubic convolution at continuous voxel position p, which
// must lie at least 1.5 voxels inside the grid: an interpolator written apart
// from the one that made the pair.
double cubic_at(const Volume& im, const Point3& p) {
  auto weight = [](double t) {
    t = std::abs(t);
    return t < 1 ? (1.5 * t - 2.5) * t * t + 1 : t < 2 ? ((-0.5 * t + 2.5) * t - 4) * t + 2 : 0.0;
  };
  const int b[3] = {int(std::floor(p[0])), int(std::floor(p[1])), int(std::floor(p[2]))};
  double sum = 0;
  for (int k = -1; k <= 2; ++k)
    for (int j = -1; j <= 2; ++j)
      for (int i = -1; i <= 2; ++i)
        sum += weight(p[0] - (b[0] + i)) * weight(p[1] - (b[1] + j)) * weight(p[2] - (b[2] + k)) *
               im.at(b[0] + i, b[1] + j, b[2] + k);
  return sum;
}

bool inside(const Volume& im, const Point3& p, double margin) {
  for (int a = 0; a < 3; ++a)
    if (!(p[a] >= margin && p[a] <= im.dim[a] - 1 - margin)) return false;
  return true;
}

TEST(TestPair, AffineFloatingGridHasItsOwnVoxelsAndCoversTheMovedImage) {
  const Blob b = make_smooth_source();
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, affine_options());
  const Matrix4& vf = p.floating.voxel_to_world;
  EXPECT_NE(p.floating.dim, b.image.dim);
  EXPECT_EQ(p.floating.data.size(), p.floating.voxels());
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(p.floating.spacing[c], 1.5);
    EXPECT_NEAR(norm(column(vf, c)), 1.5, 1e-12) << c;
    // The source's axis directions: the columns are parallel, same sense.
    const Point3 a = column(vf, c), s = column(b.image.voxel_to_world, c);
    EXPECT_NEAR((a[0] * s[0] + a[1] * s[1] + a[2] * s[2]) / (norm(a) * norm(s)), 1.0, 1e-12) << c;
  }
  EXPECT_EQ(vf[3], (std::array<double, 4>{0, 0, 0, 1}));
  // The reference keeps the source's grid; the truth too.
  EXPECT_EQ(p.reference.dim, b.image.dim);
  EXPECT_EQ(p.reference.voxel_to_world, b.image.voxel_to_world);
  EXPECT_EQ(p.truth.voxel_to_world, b.image.voxel_to_world);
  // Every corner of the source's field of view, moved by A, lies 3 voxels
  // inside the floating grid, and the grid is no larger than that needs.
  const Matrix4 to_floating =
      gi::reg::multiply(gi::reg::inverse(vf), gi::reg::multiply(p.affine.matrix, b.image.voxel_to_world));
  Point3 lo{1e9, 1e9, 1e9}, hi{-1e9, -1e9, -1e9};
  for (int corner = 0; corner < 8; ++corner) {
    Point3 q;
    for (int a = 0; a < 3; ++a) q[a] = (corner >> a & 1) ? 31 : 0;
    q = gi::reg::transform_point(to_floating, q);
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], q[a]), hi[a] = std::max(hi[a], q[a]);
  }
  for (int a = 0; a < 3; ++a) {
    EXPECT_GE(lo[a], 3 - 1e-9) << a;
    EXPECT_LT(lo[a], 4 + 1e-9) << a;
    EXPECT_LE(hi[a], p.floating.dim[a] - 1 - 3 + 1e-9) << a;
    EXPECT_GT(hi[a], p.floating.dim[a] - 1 - 4 - 1e-9) << a;
  }
}

// The bounds are read off the matrix itself, not off the parameters it was made of.
TEST(TestPair, AffineStaysWithinItsBounds) {
  const Blob b = make_smooth_source();
  // The brain's centroid in world mm: the point the affine turns about.
  double sum[3] = {0, 0, 0}, count = 0;
  for (int z = 0; z < 32; ++z)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x)
        if (b.brain.at(x, y, z) > 0) sum[0] += x, sum[1] += y, sum[2] += z, ++count;
  const Point3 centre =
      gi::reg::transform_point(b.image.voxel_to_world, {sum[0] / count, sum[1] / count, sum[2] / count});
  PairOptions o = affine_options();
  o.max_displacement = 0;  // the affine alone is under test; keeps each pair quick
  double largest_scale_change = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    o.seed = seed;
    const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
    const Matrix4& a = p.affine.matrix;
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(p.affine.centre[c], centre[c], 1e-9) << seed;
    const Point3 moved = gi::reg::transform_point(a, centre);
    const double shift = norm({moved[0] - centre[0], moved[1] - centre[1], moved[2] - centre[2]});
    EXPECT_GE(shift, 5.0 - 1e-9) << seed;  // drawn in [max/2, max]
    EXPECT_LE(shift, 10.0 + 1e-9) << seed;
    const double angle = gi::reg::rotation_angle_between(gi::reg::identity4(), a);
    EXPECT_GE(angle, 5.0 - 1e-6) << seed;
    EXPECT_LE(angle, 10.0 + 1e-6) << seed;
    // A's linear part is R diag(s): its columns' lengths are the scales.
    for (int c = 0; c < 3; ++c) {
      const double s = norm(column(a, c));
      EXPECT_GE(s, 0.95 - 1e-12) << seed;
      EXPECT_LE(s, 1.05 + 1e-12) << seed;
      largest_scale_change = std::max(largest_scale_change, std::abs(s - 1));
      // And the recorded parameters are those of the matrix (R S: scales along the world axes first).
      EXPECT_NEAR(s, p.affine.scaling[c], 1e-12) << seed;
      EXPECT_NEAR(moved[c] - centre[c], p.affine.translation[c], 1e-9) << seed;
    }
    EXPECT_NEAR(angle, p.affine.rotation_degrees, 1e-6) << seed;
    EXPECT_EQ(a[3], (std::array<double, 4>{0, 0, 0, 1}));
  }
  EXPECT_GT(largest_scale_change, 0.03);  // the scales are drawn, not left at 1
  // Bounds of 0: the identity.
  o.affine_rotation = o.affine_translation = o.affine_scaling = 0;
  const Matrix4 a = gi::reg::make_test_pair(b.image, b.brain, o).affine.matrix;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(a[r][c], r == c ? 1.0 : 0.0, 1e-12) << r << " " << c;
}

// The heart of the affine pair: reference voxel x shows what the floating
// image shows at the floating world point V0 (x + d(x)), d the truth.
TEST(TestPair, AffineFloatingSampledAtTheTruthGivesTheReference) {
  const Blob b = make_smooth_source();
  PairOptions o = affine_options();
  o.noise = 0;
  o.bias = 0;
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  const Matrix4 vf_inverse = gi::reg::inverse(p.floating.voxel_to_world);
  const Matrix4& v0 = b.image.voxel_to_world;
  double worst = 0, worst_without_affine = 0;
  int checked = 0;
  for (int z = 0; z < 32; ++z)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x) {
        // x + u two voxels inside the source: the reference there is no edge repetition.
        const Point3 xu = {x + p.local.at(x, y, z, 0), y + p.local.at(x, y, z, 1), z + p.local.at(x, y, z, 2)};
        if (!inside(b.image, xu, 2)) continue;
        const Point3 xd = {x + p.truth.at(x, y, z, 0), y + p.truth.at(x, y, z, 1), z + p.truth.at(x, y, z, 2)};
        const Point3 y_f = gi::reg::transform_point(vf_inverse, gi::reg::transform_point(v0, xd));
        ASSERT_TRUE(inside(p.floating, y_f, 1.5)) << x << " " << y << " " << z;
        const double error = std::abs(cubic_at(p.floating, y_f) - p.reference.at(x, y, z));
        worst = std::max(worst, error);
        // Control: the same without the affine (the plain pair's convention) is far off.
        const Point3 y_u = gi::reg::transform_point(vf_inverse, gi::reg::transform_point(v0, xu));
        if (inside(p.floating, y_u, 1.5))
          worst_without_affine =
              std::max(worst_without_affine, std::abs(cubic_at(p.floating, y_u) - p.reference.at(x, y, z)));
        ++checked;
      }
  EXPECT_GT(checked, 10000);
  // Two cubic interpolations (source at 1 mm-ish, floating at 1.5 mm) of
  // sinusoids of amplitude 53 in all: well under 1% of it.
  EXPECT_LT(worst, 0.5);
  EXPECT_GT(worst_without_affine, 5.0);
}

TEST(TestPair, AffineOptionLeavesThePlainPairAsItWas) {
  const Blob b = make_smooth_source();
  const PairOptions plain_options = small_options();
  const TestPair plain = gi::reg::make_test_pair(b.image, b.brain, plain_options);
  // The plain pair: one grid, A = I, truth = u.
  EXPECT_EQ(plain.floating.dim, b.image.dim);
  EXPECT_EQ(plain.floating.voxel_to_world, b.image.voxel_to_world);
  EXPECT_EQ(plain.floating.spacing, b.image.spacing);
  EXPECT_EQ(plain.affine.matrix, gi::reg::identity4());
  EXPECT_EQ(plain.truth.data, plain.local.data);
  // The affine pair of the same seed: the same reference, mask, u and
  // statistics (A has its own stream); only the floating image and the truth differ.
  const TestPair affine = gi::reg::make_test_pair(b.image, b.brain, affine_options());
  EXPECT_EQ(affine.reference.data, plain.reference.data);
  EXPECT_EQ(affine.mask.data, plain.mask.data);
  EXPECT_EQ(affine.local.data, plain.truth.data);
  EXPECT_EQ(affine.stats.mean_displacement, plain.stats.mean_displacement);
  EXPECT_EQ(affine.stats.min_jacobian, plain.stats.min_jacobian);
  EXPECT_NE(affine.truth.data, plain.truth.data);
  // The affine's options change nothing of the plain pair when --affine is off.
  PairOptions ignored = plain_options;
  ignored.affine_rotation = 3;
  ignored.floating_voxel = 2;
  const TestPair again = gi::reg::make_test_pair(b.image, b.brain, ignored);
  EXPECT_EQ(again.floating.data, plain.floating.data);
  EXPECT_EQ(again.floating.dim, plain.floating.dim);
  EXPECT_EQ(again.truth.data, plain.truth.data);
}

TEST(TestPair, AffineSameSeedSamePairAnotherSeedAnother) {
  const Blob b = make_smooth_source();
  PairOptions o = affine_options();
  const TestPair p1 = gi::reg::make_test_pair(b.image, b.brain, o);
  const TestPair p2 = gi::reg::make_test_pair(b.image, b.brain, o);
  EXPECT_EQ(p1.affine.matrix, p2.affine.matrix);
  EXPECT_EQ(p1.floating.dim, p2.floating.dim);
  EXPECT_EQ(p1.floating.voxel_to_world, p2.floating.voxel_to_world);
  EXPECT_EQ(p1.floating.data, p2.floating.data);
  EXPECT_EQ(p1.truth.data, p2.truth.data);
  EXPECT_EQ(p1.reference.data, p2.reference.data);
  o.seed = 2;
  const TestPair p3 = gi::reg::make_test_pair(b.image, b.brain, o);
  EXPECT_NE(p1.affine.matrix, p3.affine.matrix);
  EXPECT_NE(p1.truth.data, p3.truth.data);
}

TEST(TestPair, AffinePairFilesRecordTheAffineAndTheFloatingGrid) {
  const Blob b = make_smooth_source();
  const PairOptions o = affine_options();
  const TestPair p = gi::reg::make_test_pair(b.image, b.brain, o);
  const fs::path dir = fs::temp_directory_path() / ("gi_test_pair_affine_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "image.nii") << "abc";
  std::ofstream(dir / "brain.nii") << "";
  gi::reg::write_test_pair(dir / "pair", p, o, dir / "image.nii", dir / "brain.nii");
  std::ifstream affine_file(dir / "pair" / "truth_affine.txt"), json_file(dir / "pair" / "pair.json");
  const std::string affine_text((std::istreambuf_iterator<char>(affine_file)), std::istreambuf_iterator<char>());
  const nlohmann::json j = nlohmann::json::parse(json_file);
  const Volume floating = gi::reg::read_nifti(dir / "pair" / "floating.nii.gz");
  // The plain pair writes no affine and keeps its pair.json as it was.
  gi::reg::write_test_pair(dir / "plain", gi::reg::make_test_pair(b.image, b.brain, small_options()), small_options(),
                           dir / "image.nii", dir / "brain.nii");
  const bool plain_has_affine_file = fs::exists(dir / "plain" / "truth_affine.txt");
  const nlohmann::json plain = gi::reg::pair_json(p, small_options(), dir / "image.nii", dir / "brain.nii");
  fs::remove_all(dir);
  EXPECT_EQ(gi::reg::parse_matrix_text(affine_text, "truth_affine.txt"), p.affine.matrix);  // 17 digits: exact
  EXPECT_EQ(j["affine"]["matrix"].get<Matrix4>(), p.affine.matrix);
  EXPECT_EQ(j["floating_grid"]["dim"], nlohmann::json(p.floating.dim));
  EXPECT_EQ(j["floating_grid"]["spacing_mm"], nlohmann::json(p.floating.spacing));
  EXPECT_EQ(j["floating_grid"]["voxel_to_world"].get<Matrix4>(), p.floating.voxel_to_world);
  EXPECT_EQ(j["options"]["floating_voxel_mm"], 1.5);
  EXPECT_EQ(j["files"]["truth_affine"], "truth_affine.txt");
  // The NIfTI header carries the floating grid (the sform is float32).
  EXPECT_EQ(floating.dim, p.floating.dim);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(floating.voxel_to_world[r][c], p.floating.voxel_to_world[r][c], 1e-4);
  EXPECT_FALSE(plain_has_affine_file);
  EXPECT_FALSE(plain.contains("affine"));
  EXPECT_FALSE(plain.contains("floating_grid"));
  EXPECT_FALSE(plain["options"].contains("affine"));
}

TEST(TestPair, BadAffineOptionsAreRejected) {
  const Blob b = make_smooth_source();
  PairOptions o = affine_options();
  o.floating_voxel = 0;
  EXPECT_THROW(gi::reg::make_test_pair(b.image, b.brain, o), std::invalid_argument);
  o = affine_options();
  o.affine_rotation = -1;
  EXPECT_THROW(gi::reg::make_test_pair(b.image, b.brain, o), std::invalid_argument);
  o = affine_options();
  o.affine_scaling = 0.6;
  EXPECT_THROW(gi::reg::make_test_pair(b.image, b.brain, o), std::invalid_argument);
}

}  // namespace
