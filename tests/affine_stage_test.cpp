// The affine pre-alignment of gi register (gi/register/affine_stage.hpp) on
// the CPU emulator: a textured phantom moved by a known rotation, shift and
// scaling is found again, and the B-spline grid it starts from reproduces it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gi/register/affine_stage.hpp"
#include "gi/register/emulated_device.hpp"
#include "gi/register/grid_transform.hpp"
#include "gi/register/kernel_set.hpp"
#include "gi/register/registration.hpp"
#include "tests/test_support.hpp"

namespace gi::reg {
namespace {

const std::filesystem::path kSeeds = test::source_dir() / "seeds";

// An object with texture that does not repeat (block matching would lock
// onto the wrong period of a periodic one): Gaussian blobs of 1.5 to 3
// voxels at random places inside a sphere, on a smooth background blob.
struct Blobs {
  std::vector<std::array<double, 5>> blobs;  // x, y, z, sigma, amplitude
  explicit Blobs(int n) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    const double c = (n - 1) / 2.0, r = 0.33 * n;
    while (blobs.size() < 60) {
      const double x = c + r * (2 * u(rng) - 1), y = c + r * (2 * u(rng) - 1), z = c + r * (2 * u(rng) - 1);
      if (std::hypot(x - c, y - c, z - c) > r) continue;
      blobs.push_back({x, y, z, 1.5 + 1.5 * u(rng), 0.3 + 0.7 * u(rng)});
    }
    blobs.push_back({c, c, c, 0.3 * n, 0.5});
  }
  double operator()(double x, double y, double z) const {
    double v = 0;
    for (const auto& b : blobs) {
      const double d2 = (x - b[0]) * (x - b[0]) + (y - b[1]) * (y - b[1]) + (z - b[2]) * (z - b[2]);
      v += b[4] * std::exp(-d2 / (2 * b[3] * b[3]));
    }
    return v;
  }
};

// Rotation by `degrees` about `axis`, scaling, then a shift, about the image centre (voxels).
Matrix4 moved_about_centre(int n, double degrees, Point3 axis, double scale, Point3 shift) {
  const double len = std::hypot(axis[0], axis[1], axis[2]);
  for (double& a : axis) a /= len;
  const Matrix4 r = rotation_about(axis, degrees);
  const double centre = (n - 1) / 2.0;
  Matrix4 m = identity4();
  for (int i = 0; i < 3; ++i) {
    m[i][3] = centre + shift[i];
    for (int j = 0; j < 3; ++j) {
      m[i][j] = scale * r[i][j];
      m[i][3] -= scale * r[i][j] * centre;
    }
  }
  return m;
}

// reference(x) = floating(m x): the floating image is the object moved by m.
std::pair<Volume, Volume> moved_pair(int n, const Matrix4& m) {
  const Blobs object(n);
  const Matrix4 back = inverse(m);
  Volume reference, floating;
  for (Volume* v : {&reference, &floating}) {
    v->dim = {n, n, n};
    v->data.assign(v->voxels(), 0.f);
  }
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        reference.at(x, y, z) = static_cast<float>(object(x, y, z));
        const Point3 p = transform_point(back, {double(x), double(y), double(z)});
        floating.at(x, y, z) = static_cast<float>(object(p[0], p[1], p[2]));
      }
  return {reference, floating};
}

// The largest distance between where two transforms put the voxels of the
// image's central half (the object's region), in voxels.
double largest_difference(const Matrix4& a, const Matrix4& b, int n) {
  double worst = 0;
  for (int z = n / 4; z < 3 * n / 4; ++z)
    for (int y = n / 4; y < 3 * n / 4; ++y)
      for (int x = n / 4; x < 3 * n / 4; ++x) {
        const Point3 pa = transform_point(a, {double(x), double(y), double(z)}), pb = transform_point(b, {double(x), double(y), double(z)});
        worst = std::max(worst, std::hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]));
      }
  return worst;
}

// Over the image's central half (the object's region): how far the
// registration's displacement leaves each voxel from where `truth` puts it.
struct FieldError {
  double mean = 0, worst = 0;
};
FieldError displacement_error(const Volume& displacement, const Matrix4& truth, int n) {
  FieldError e;
  std::size_t counted = 0;
  const std::size_t voxels = displacement.voxels();
  for (int z = n / 4; z < 3 * n / 4; ++z)
    for (int y = n / 4; y < 3 * n / 4; ++y)
      for (int x = n / 4; x < 3 * n / 4; ++x, ++counted) {
        const Point3 q = transform_point(truth, {double(x), double(y), double(z)});
        const std::size_t i = displacement.index(x, y, z);
        const double d = std::hypot(x + displacement.data[i] - q[0], y + displacement.data[voxels + i] - q[1],
                                    z + displacement.data[2 * voxels + i] - q[2]);
        e.mean += d;
        e.worst = std::max(e.worst, d);
      }
  e.mean /= static_cast<double>(counted);
  return e;
}

// Over the central half: the mean |warped - reference| as a fraction of the reference's largest |value|.
double warped_difference(const Volume& warped, const Volume& reference, int n) {
  double error = 0, range = 0;
  std::size_t counted = 0;
  for (int z = n / 4; z < 3 * n / 4; ++z)
    for (int y = n / 4; y < 3 * n / 4; ++y)
      for (int x = n / 4; x < 3 * n / 4; ++x, ++counted) {
        error += std::abs(warped.at(x, y, z) - reference.at(x, y, z));
        range = std::max(range, double(std::abs(reference.at(x, y, z))));
      }
  return error / counted / range;
}

RegistrationOptions affine_only(AffineMode mode) {
  RegistrationOptions o;
  o.levels = 2;
  o.bspline = false;
  o.affine.mode = mode;
  return o;
}

TEST(AffineStage, FindsAKnownRotationShiftAndScaling) {
  const int n = 32;
  const Matrix4 truth = moved_about_centre(n, 8, {0.3, -0.5, 1.0}, 1.03, {1.5, -1.0, 2.0});
  const auto [reference, floating] = moved_pair(n, truth);
  const RegistrationOptions options = affine_only(AffineMode::Affine);
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const RegistrationResult r = register_images(reference, floating, kernels, device, options);
  const Matrix4& found = r.affine.voxel_transform;
  // The affine alone: measured 0.30 degree and 0.157 voxel at most (the
  // whole registration below meets issue 30's 0.5 degree and 0.2 voxel).
  EXPECT_LT(rotation_angle_between(found, truth), 0.5);
  EXPECT_LT(largest_difference(found, truth, n), 0.25) << matrix_text(found) << "truth\n" << matrix_text(truth);
  ASSERT_EQ(r.affine.levels.size(), 2u);
  for (const AffineLevelReport& l : r.affine.levels) {
    EXPECT_GT(l.blocks, 0);
    EXPECT_GE(l.matches, l.inliers);
    EXPECT_GT(l.inliers, 8);
  }
  EXPECT_TRUE(r.levels.empty()) << "no B-spline level runs with the affine alone";
  // The same grid as a world matrix: identity voxel_to_world here.
  EXPECT_LT(largest_difference(r.affine.world_transform, truth, n), 0.25);
  // The warped image comes through the grid that encodes the affine: it matches the reference inside.
  EXPECT_LT(warped_difference(r.warped, reference, n), 0.02);
}

// With a reference mask only the blocks inside it take part: the
// reference's half x < n/2 is replaced by the object shifted 3 voxels,
// which contradicts the motion, and the mask leaves it out.
TEST(AffineStage, UsesOnlyTheBlocksInsideTheMask) {
  const int n = 32;
  const Matrix4 truth = moved_about_centre(n, 8, {0.3, -0.5, 1.0}, 1.03, {1.5, -1.0, 2.0});
  auto [reference, floating] = moved_pair(n, truth);
  const Blobs object(n);
  Volume mask = reference;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        if (x < n / 2) reference.at(x, y, z) = static_cast<float>(object(x + 3, y - 3, z));
        mask.at(x, y, z) = x < n / 2 ? 0.f : 1.f;
      }
  const RegistrationOptions options = affine_only(AffineMode::Affine);
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const RegistrationResult masked = register_images(reference, floating, kernels, device, options, &mask);
  const RegistrationResult whole = register_images(reference, floating, kernels, device, options);
  ASSERT_EQ(masked.affine.levels.size(), whole.affine.levels.size());
  for (std::size_t l = 0; l < whole.affine.levels.size(); ++l)
    EXPECT_LE(masked.affine.levels[l].blocks, whole.affine.levels[l].blocks / 2 + 1) << "level " << l;
  // Measured: 0.67 voxel at most masked (1.5 degrees: half the object
  // constrains the fit less), 5.4 voxels unmasked.
  const double masked_error = largest_difference(masked.affine.voxel_transform, truth, n);
  EXPECT_LT(masked_error, 1.0);
  EXPECT_LT(masked_error, 0.25 * largest_difference(whole.affine.voxel_transform, truth, n));
  EXPECT_LT(rotation_angle_between(masked.affine.voxel_transform, truth), 2.0);
}

TEST(AffineStage, RigidOnlyKeepsARotation) {
  const int n = 32;
  const Matrix4 truth = moved_about_centre(n, 6, {1.0, 0.2, 0.4}, 1.0, {-1.0, 2.0, 0.5});
  const auto [reference, floating] = moved_pair(n, truth);
  const RegistrationOptions options = affine_only(AffineMode::Rigid);
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const Matrix4 found = register_images(reference, floating, kernels, device, options).affine.voxel_transform;
  // Measured 0.37 degree and 0.14 voxel at most.
  EXPECT_LT(rotation_angle_between(found, truth), 0.5);
  EXPECT_LT(largest_difference(found, truth, n), 0.25);
  // A rigid transform: its linear part is a rotation.
  double det = 0;
  for (int j = 0; j < 3; ++j)
    det += found[0][j] * (found[1][(j + 1) % 3] * found[2][(j + 2) % 3] - found[1][(j + 2) % 3] * found[2][(j + 1) % 3]);
  EXPECT_NEAR(det, 1.0, 1e-6);
}

// Cubic B-splines reproduce linear functions, so the grid that starts the
// B-spline stage is the affine exactly, at any level.
TEST(AffineStage, TheStartingGridReproducesTheAffine) {
  const Matrix4 m = moved_about_centre(40, 7, {0.2, 0.9, -0.3}, 0.97, {2.0, 1.0, -3.0});
  const std::array<int, 3> dim{20, 18, 22};  // level 1 of a 40 x 36 x 44 image
  const double spacing = 5;
  const std::array<int, 3> gd = grid_dim_for(dim, spacing);
  const std::vector<float> nodes = grid_of_affine(m, 1, gd, spacing);
  EmulatedDevice device;
  const KernelSet kernels({"bspline/deformation_field", "resampling/trilinear", "deformation/deformation_to_displacement"},
                          {kSeeds, std::nullopt, std::nullopt, ""});
  const KernelRunner runner(kernels, device);
  Buffer grid(device, nodes.size() * 4);
  grid.upload(nodes);
  Volume like;
  like.dim = dim;
  const Volume d = GridTransform(runner, dim, spacing, grid, dim).displacement(like);
  // A level-1 voxel is two finest ones.
  Matrix4 two = identity4();
  for (int a = 0; a < 3; ++a) two[a][a] = 2;
  const Matrix4 level_m = multiply(inverse(two), multiply(m, two));
  double worst = 0;
  const std::size_t voxels = d.voxels();
  for (int z = 0; z < dim[2]; ++z)
    for (int y = 0; y < dim[1]; ++y)
      for (int x = 0; x < dim[0]; ++x) {
        const Point3 q = transform_point(level_m, {double(x), double(y), double(z)});
        const std::size_t i = d.index(x, y, z);
        worst = std::max({worst, std::abs(x + d.data[i] - q[0]), std::abs(y + d.data[voxels + i] - q[1]),
                          std::abs(z + d.data[2 * voxels + i] - q[2])});
      }
  EXPECT_LT(worst, 1e-3);
}


// The whole registration, the affine stage then the B-spline stage from the
// grid that encodes it, recovers the moved phantom (issue 30: within 0.5
// degree and 0.2 voxel, on a phantom of at most 32^3 voxels).
TEST(AffineStage, TheRegistrationRecoversAMovedPhantom) {
  const int n = 32;
  const Matrix4 truth = moved_about_centre(n, 8, {0.3, -0.5, 1.0}, 1.03, {1.5, -1.0, 2.0});
  const auto [reference, floating] = moved_pair(n, truth);
  RegistrationOptions options;
  options.levels = 2;
  options.bins = 32;
  options.max_iterations = 20;
  // One modality: SSD. (NMI of 32 bins on this phantom, mostly background,
  // moved the affine's 0.09 voxel mean error to 0.26 in 50 iterations, before the
  // trimmed fit's tolerance and reg_aladin's rigid-first-level-only rule.)
  options.similarity = Similarity::Ssd;
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const RegistrationResult r = register_images(reference, floating, kernels, device, options);
  EXPECT_LT(rotation_angle_between(r.affine.voxel_transform, truth), 0.5);
  const FieldError e = displacement_error(r.displacement, truth, n);
  // Measured: mean 0.048, at most 0.114 voxel (the affine alone: at most 0.157).
  EXPECT_LT(e.worst, 0.2) << "mean " << e.mean;
  EXPECT_LT(e.mean, 0.1);
  ASSERT_EQ(r.levels.size(), 2u);
}


// The floating image on another grid (1.5 mm voxels, other sizes and
// origin): it is resampled through world coordinates, and the affine found
// is the world one.
TEST(AffineStage, RegistersAFloatingImageOnAnotherGrid) {
  const int n = 32;
  const Blobs object(n);
  // World = the reference's voxel coordinates (1 mm voxels at the origin).
  const Matrix4 truth = moved_about_centre(n, 6, {0.6, 0.2, -1.0}, 0.98, {-1.0, 1.5, 1.0});  // reference world -> floating world
  Volume reference, floating;
  reference.dim = {n, n, n};
  reference.data.assign(reference.voxels(), 0.f);
  floating.dim = {24, 26, 22};
  floating.spacing = {1.5, 1.5, 1.5};
  floating.voxel_to_world = {{{1.5, 0, 0, -2}, {0, 1.5, 0, -3.5}, {0, 0, 1.5, 0.5}, {0, 0, 0, 1}}};
  floating.data.assign(floating.voxels(), 0.f);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) reference.at(x, y, z) = static_cast<float>(object(x, y, z));
  const Matrix4 back = inverse(truth);
  for (int z = 0; z < floating.dim[2]; ++z)
    for (int y = 0; y < floating.dim[1]; ++y)
      for (int x = 0; x < floating.dim[0]; ++x) {
        const Point3 w = transform_point(floating.voxel_to_world, {double(x), double(y), double(z)});
        const Point3 p = transform_point(back, w);
        floating.at(x, y, z) = static_cast<float>(object(p[0], p[1], p[2]));
      }
  RegistrationOptions options;
  options.levels = 2;
  options.max_iterations = 20;
  options.similarity = Similarity::Ssd;
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const RegistrationResult r = register_images(reference, floating, kernels, device, options);
  // Measured: the affine 0.66 degree and 0.25 mm off at most (the floating
  // image's 1.5 mm voxels hold less detail than the same-grid case's, 0.30
  // degree), the whole registration 0.19 mm at most.
  EXPECT_LT(rotation_angle_between(r.affine.world_transform, truth), 1.0);
  EXPECT_LT(largest_difference(r.affine.world_transform, truth, n), 0.35) << matrix_text(r.affine.world_transform);
  // The displacement (reference voxels = mm here) reaches the truth's world points.
  EXPECT_LT(displacement_error(r.displacement, truth, n).worst, 0.25);
  // The warped image is the floating image brought onto the reference's grid.
  EXPECT_LT(warped_difference(r.warped, reference, n), 0.03);
  EXPECT_EQ(r.warped.dim, reference.dim);
}


// Images whose headers put them a metre apart share no voxel: the affine
// stage says so instead of fitting noise.
TEST(AffineStage, ImagesThatDoNotOverlapAreRefused) {
  const int n = 32;
  auto [reference, floating] = moved_pair(n, identity4());
  floating.voxel_to_world[0][3] = 1000;
  RegistrationOptions options;
  options.levels = 2;
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  try {
    register_images(reference, floating, kernels, device, options);
    FAIL() << "images a metre apart were registered";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("textured blocks matched at the finest level (the images may not overlap"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gi::reg
