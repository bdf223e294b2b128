#pragma once
// How close an estimated displacement field is to a known truth (the test
// pairs of gi/register/test_pair.hpp), whether it folds, and how far two
// estimates (e.g. the seed kernels' run and the evolved kernels' run) differ.
//
// Convention, shared with the test pairs and `gi register`: a displacement
// field u has 3 components in voxel units of the reference grid; reference
// voxel x corresponds to the floating image's voxel position x + u(x) (both
// images on one grid). More generally (an affine test pair, whose images lie
// on different grids): reference voxel x corresponds to the floating world
// point V_ref (x + u(x)), V_ref the reference's voxel_to_world; on one grid
// the two statements agree.
#include <array>
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/register/volume.hpp"

namespace gi::reg {

// Nearest-rank percentile: with the n values sorted ascending, the
// ceil(p / 100 * n)-th smallest (1-based), and the smallest for p = 0. It is
// always one of the values (never interpolated). p in [0, 100]; throws
// std::invalid_argument for an empty list or p outside [0, 100].
double percentile_nearest_rank(const std::vector<float>& sorted_ascending, double p);

// Mean, median (p50), p95, p99 and max of a list, percentiles nearest-rank.
struct Summary {
  std::size_t count = 0;
  double mean = 0, median = 0, p95 = 0, p99 = 0, max = 0;
};
Summary summarise(std::vector<float> values);  // an empty list gives all zeros
nlohmann::json to_json(const Summary& s);

// det(I + grad u) per voxel (the local volume change of x -> x + u(x)),
// derivatives in voxel units by central differences, one-sided at the borders
// (0 along an axis of one voxel). `field` has 3 components.
std::vector<float> jacobian_determinants(const Volume& field);

// |estimated - truth| inside the mask, folding of the estimate, and the
// truth's own size (for scale: an error well under the truth's mean is a
// registration that worked).
struct AccuracyReport {
  std::size_t mask_voxels = 0, voxels = 0;
  Summary error;                   // |estimated - truth| in voxels, inside the mask
  // |L (estimated - truth)| in mm, inside the mask, L the 3x3 linear part of
  // the truth's voxel_to_world (the reference's): comparable across voxel
  // sizes and between axes of different voxel size. Equal to `error` for
  // 1 mm voxels (L a rotation).
  Summary error_mm;
  Summary truth_length;            // |truth| inside the mask
  Summary estimated_length;        // |estimated| inside the mask
  std::size_t folded_in_mask = 0;  // voxels with det(I + grad estimated) <= 0
  std::size_t folded = 0;          // the same over the whole image
  double folded_fraction_in_mask = 0, folded_fraction = 0;
  double min_jacobian = 0, min_jacobian_in_mask = 0;
};
// Throws std::invalid_argument when the fields or the mask do
// not share one grid or do not have 3 (fields) and 1 (mask) components. A mask
// voxel counts when its value is > 0.5.
AccuracyReport measure_accuracy(const Volume& estimated, const Volume& truth, const Volume& mask);
nlohmann::json to_json(const AccuracyReport& r);

// |a - b| inside the mask: how far two estimates differ.
struct FieldComparison {
  std::size_t mask_voxels = 0;
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};
FieldComparison compare_fields(const Volume& a, const Volume& b, const Volume& mask);
nlohmann::json to_json(const FieldComparison& c);

// transformix `-def all` writes deformationField.nii(.gz): a displacement in
// physical millimetres in ITK's LPS frame, on the fixed (reference) grid. ITK
// reads a NIfTI's RAS sform and flips x and y, so in the reference's RAS frame
// the displacement is diag(-1, -1, 1) d_lps, and in voxel units
//   d_vox = inverse(A) * diag(-1, -1, 1) * d_lps,
// A the 3x3 part of the reference's voxel_to_world. The result keeps
// `deformation`'s grid and uses the convention above (valid when the floating
// image shares the reference's grid, as a plain test pair's does, and also for
// an affine pair's different grids under its world-point convention, as the
// deformation field is itself a world-space displacement). Throws
// std::invalid_argument for a field without 3 components or a singular A.
Volume elastix_lps_mm_to_voxels(const Volume& deformation,
                                const std::array<std::array<double, 4>, 4>& reference_voxel_to_world);

}  // namespace gi::reg
