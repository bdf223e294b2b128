// The registration test pairs (gi/register/test_pair.hpp) on small synthetic
// volumes, and the default Colin27 pair when Debian's mricron-data is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "gi/register/accuracy.hpp"
#include "gi/register/test_pair.hpp"

namespace {
using gi::reg::PairOptions;
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

}  // namespace
