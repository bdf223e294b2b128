#pragma once
// A registration test pair with a KNOWN deformation, made from one real image
// (e.g. the Colin27 brain MRI of Debian's mricron-data): the floating image is
// the image itself, the reference is the image warped by a smooth random
// displacement u, so that a registration of the pair can be scored against u
// (gi/register/accuracy.hpp).
//
// Convention (the plain pair): u has 3 components in voxels; reference voxel x
// corresponds to the floating image's voxel position x + u(x). The two images
// share one grid. (An affine pair: below.)
//
// The truth u is a dense field independent of any B-spline grid: independent
// Gaussian white noise per voxel and component, smoothed by a separable
// Gaussian of `sigma` voxels, scaled so that max |u| inside the brain (in
// reference space) is `max_displacement`. It must not fold: det(I + grad u) > 0
// at every voxel, or make_test_pair throws.
//
// The reference is the image resampled at x + u(x) by cubic convolution
// (Keys, a = -0.5, i.e. Catmull-Rom: interpolating, no prefilter; edge voxels
// repeated outside), times a smooth bias field exp(p(x)), p a random quadratic
// polynomial scaled to max |p| = `bias` over the image, plus Gaussian noise. The
// floating image is the image plus its own Gaussian noise. The brain mask in
// reference space is (brain > 0) resampled at x + u(x) by trilinear
// interpolation, kept where >= 0.5.
//
// With PairOptions::affine (`gi make-pair --affine`) the pair also needs an
// affine pre-alignment and its images lie on different grids, as real pairs
// do. V0 is the source image's voxel_to_world (the reference keeps it). A
// random world-space affine A (reference world mm -> floating world mm, the
// matrix gi register and reg_aladin write) is drawn about the source brain's
// centroid c: A(w) = c + t + R S (w - c), R a rotation by an angle uniform in
// [1/2, 1] x `affine_rotation` degrees about an axis uniform on the sphere,
// S = diag(s) with each s uniform in [1 - affine_scaling, 1 + affine_scaling]
// along the world axes, and t in a direction uniform on the sphere, of length
// uniform in [1/2, 1] x `affine_translation` mm (the vector's length, not each
// component). (At least half the maximum, so that every seed's pair needs a
// real pre-alignment.) The floating image lies on its own grid Vf: V0's axis
// directions, voxels of `floating_voxel` mm, the origin and dimensions that
// cover the source's field of view (its voxel centres) mapped by A plus 3
// voxels on every side. It is F(y) = image(V0^-1 A^-1 Vf y) by the same cubic
// convolution (edge voxels repeated outside the source image, as for the
// reference, so both images show one extended image), plus noise; so the
// floating world point of reference world point w is A w. The truth becomes
// d(x) = V0^-1 A V0 (x + u(x)) - x: reference voxel x corresponds to the
// floating WORLD point V0 (x + d(x)) (floating voxel
// Vf^-1 V0 (x + d(x))). Without affine, A = I, Vf = V0 and d = u exactly, so
// both conventions agree. The reference, the mask, u, the statistics and the
// fold check do not depend on A: an affine pair has the same reference as the
// plain pair of its seed.
//
// Everything is a function of the seed (std::mt19937_64 streams derived from
// it, Gaussian values by the polar method, uniform values from the engine's
// raw bits, so any standard library gives the same pair). The affine has its
// own stream, so the plain pair of a seed is the same whatever the affine
// options.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/register/affine_fit.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {

struct PairOptions {
  std::uint64_t seed = 1;
  double max_displacement = 6.0;  // voxels: the largest |u| inside the brain (reference space)
  double sigma = 10.0;            // voxels: the Gaussian that smooths the white noise of u
  // A second, broader random field added to u (weight relative to the first,
  // both of unit variance before the scaling): it makes |u| more even across
  // the brain, so that the mean stays above 2 voxels for a max of 6. On
  // Colin27, seeds 1-8, sigma 10: the first field alone gives a mean of
  // 1.7-2.3 voxels, both 2.08-2.50 (seed 1: 2.28), min det(I + grad u) >= 0.52.
  double low_frequency = 1.0;
  double low_frequency_sigma = 40.0;  // voxels
  double noise = 0.02;            // noise sigma, a fraction of the brain's intensity range (both images)
  double bias = 0.10;             // max |log bias| of the reference's multiplicative bias field
  // The affine pair (see the top of this file); the other fields below count only with it.
  bool affine = false;
  double affine_rotation = 10.0;     // degrees: the largest rotation angle (drawn in [max/2, max]), in [0, 90]
  double affine_translation = 10.0;  // mm: the largest |t|, the brain centre's shift ([max/2, max]), in [0, 1000]
  double affine_scaling = 0.05;      // the largest |s - 1| of each axis' scale factor, in [0, 0.5]
  double floating_voxel = 1.5;       // mm: the floating grid's voxel size, in [0.1, 20]
};

// The affine of an affine pair and the parameters it was made of.
// matrix = A: A(w) = centre + translation + R(axis, rotation_degrees) diag(scaling) (w - centre).
// Identity (and the other fields as below) for a pair without affine.
struct PairAffine {
  Matrix4 matrix = identity4();  // reference world mm -> floating world mm
  Point3 centre{0, 0, 0};        // mm: the source brain's centroid (reference world)
  Point3 axis{0, 0, 1};          // unit rotation axis
  double rotation_degrees = 0;
  Point3 translation{0, 0, 0};  // mm: A(centre) - centre
  Point3 scaling{1, 1, 1};      // along the world axes, applied before the rotation
};

struct PairStatistics {
  std::size_t brain_voxels = 0;  // voxels of the reference-space brain mask
  // |u| inside the brain mask, voxels; p95 nearest-rank.
  double mean_displacement = 0, p95_displacement = 0, max_displacement = 0;
  double min_jacobian = 0;           // min det(I + grad u) over the whole image
  double min_jacobian_in_brain = 0;  // the same inside the brain mask
  double intensity_range = 0;        // max - min of the image inside the brain (floating space)
  double noise_sigma = 0;            // absolute noise sigma added to both images
};

struct TestPair {
  Volume reference;  // on the source image's grid and geometry
  Volume floating;   // the same grid, or (affine) its own grid Vf
  // d, 3 components, reference voxels, on the reference grid: reference voxel x
  // corresponds to the floating world point V0 (x + d(x)). u without affine.
  Volume truth;
  Volume local;  // u alone (the deformation before A), as truth; equal to truth without affine
  Volume mask;   // brain in reference space, 0/1
  PairAffine affine;
  PairStatistics stats;  // of u
};

// `image` and `brain` (brain-extracted image: > 0 inside the brain) must share
// one grid. Throws std::invalid_argument for bad options or grids, and
// std::runtime_error when the truth folds (naming the smallest determinant).
TestPair make_test_pair(const Volume& image, const Volume& brain, const PairOptions& options);

// The smooth random field before scaling: 3 components on a grid of `dim`,
// each white noise smoothed by a Gaussian of `sigma` voxels (truncated at 3
// sigma) and divided by the smoothed noise's theoretical standard deviation,
// so every component has unit variance everywhere. The noise is drawn on the
// grid padded by the kernel's radius, so there is no border effect (hence
// sigma <= 50 voxels, else std::invalid_argument). sigma 0:
// white noise itself.
Volume smooth_random_field(const std::array<int, 3>& dim, double sigma, std::uint64_t seed);

// pair.json: the seed, the options, the statistics, the conventions and the
// source files with their SHA-256.
nlohmann::json pair_json(const TestPair& pair, const PairOptions& options, const std::filesystem::path& image_file,
                         const std::filesystem::path& brain_file);

// Writes reference.nii.gz, floating.nii.gz, truth_displacement.nii.gz,
// brain_mask.nii.gz and pair.json into `dir` (created if missing); for an
// affine pair also truth_affine.txt (matrix_text(A)). An affine pair's
// pair.json adds the affine's matrix and parameters and the floating grid
// (dim, voxel size, voxel_to_world).
void write_test_pair(const std::filesystem::path& dir, const TestPair& pair, const PairOptions& options,
                     const std::filesystem::path& image_file, const std::filesystem::path& brain_file);

}  // namespace gi::reg
