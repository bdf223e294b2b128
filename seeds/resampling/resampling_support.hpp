#pragma once
// CPU helpers shared by the resampling seeds (cubic B-spline resampling, the
// warped-image gradient) and by generators of other families that need a
// resampled image (block matching):
//   - the inputs of a registration in progress: a floating tissue image, the
//     active voxels of the reference image and, for each of them, the position
//     it maps to in the floating image's voxel space;
//   - trilinear sampling in double;
//   - the cubic B-spline prefilter (image values -> interpolating coefficients).
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seeds/common/volume.hpp"

namespace gi::seeds {

// What a resampling kernel reads: the floating image, the reference image's
// active voxels and the float position in floating voxel space each maps to.
struct ResamplingCase {
  Dim3 reference, floating;
  double padding = 0;  // the float value the kernel receives, in double
  std::vector<std::int32_t> active;
  std::vector<Float4> positions;  // one per active voxel, w = 0
  std::vector<float> image;       // the floating image (tissue-like), floating.voxels()
};

// Reads the variables every resampling generator shares (errors name
// `generator` and the variable):
//   dim: [x, y, z] or n            reference image size (default 217^3)
//   floating_dim: [x, y, z] or n   floating image size (default = dim)
//   spacing: s or [x, y, z]        control point spacing in voxels (default 5)
//   amplitude: a                   displacement size in voxels (default 3)
//   mask: brain | full | sphere | slab | shell   active voxels (default brain)
//   padding: p                     value outside the floating image (default 0;
//                                  only where `with_padding`)
// The positions are those of trilinear_brain: the B-spline deformation of the
// active voxels on a smooth random control grid, composed with a small rigid
// misalignment (up to 3 degrees about z, 2 voxels of translation) and mapped
// to the floating image's voxel grid (same field of view).
ResamplingCase resampling_case(const std::string& generator, const nlohmann::json& variables, std::uint64_t seed,
                               bool with_padding);

// The derived variables of a resampling workload: referenceDimX/Y/Z,
// referenceVoxelNumber, floatingDimX/Y/Z, floatingVoxelNumber,
// activeVoxelNumber (and paddingValue where `with_padding`).
std::map<std::string, double> resampling_variables(const ResamplingCase& c, bool with_padding);

// The positions of resampling_case for given active voxels (exposed for tests).
std::vector<Float4> registration_positions(Dim3 reference, Dim3 floating, const std::array<double, 3>& spacing,
                                           double amplitude, const std::vector<std::int32_t>& active,
                                           std::uint64_t seed);

// Trilinear interpolation of `image` (dims voxels) at (x, y, z) in voxel
// coordinates; each of the 8 corners outside the image contributes `padding`
// with its weight (the convention of the trilinear_resample seed).
double trilinear_interpolate(const std::vector<float>& image, Dim3 dims, double x, double y, double z, double padding);

// Cubic B-spline interpolation coefficients of `image` (Unser's recursive
// prefilter, pole sqrt(3) - 2, mirror-symmetric boundaries, in double): the
// cubic B-spline with these coefficients passes through every voxel value
// when the coefficients beyond the border are the mirrored ones. An axis of
// extent 1 is left as it is.
std::vector<double> cubic_bspline_coefficients(const std::vector<float>& image, Dim3 dims);

}  // namespace gi::seeds
