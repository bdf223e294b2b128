#pragma once
// A registration test pair with a KNOWN deformation, made from one real image
// (e.g. the Colin27 brain MRI of Debian's mricron-data): the floating image is
// the image itself, the reference is the image warped by a smooth random
// displacement u, so that a registration of the pair can be scored against u
// (gi/register/accuracy.hpp).
//
// Convention: u has 3 components in voxels; reference voxel x corresponds to
// the floating image's voxel position x + u(x). The two images share one grid.
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
// Everything is a function of the seed (std::mt19937_64 streams derived from
// it, Gaussian values by the polar method, so any standard library gives the
// same pair).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

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
  Volume reference, floating;
  Volume truth;  // u, 3 components, voxels, on the reference grid
  Volume mask;   // brain in reference space, 0/1
  PairStatistics stats;
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
// brain_mask.nii.gz and pair.json into `dir` (created if missing).
void write_test_pair(const std::filesystem::path& dir, const TestPair& pair, const PairOptions& options,
                     const std::filesystem::path& image_file, const std::filesystem::path& brain_file);

}  // namespace gi::reg
