#pragma once
// CPU code shared by the similarity-measure seeds (SSD, NMI, LNCC): the image
// pair they compare, the Parzen window of the NMI histogram and the NMI
// tables, all in double.
//
// The image pair: the reference image is the brain phantom's tissue image;
// the warped image is a floating image (the same tissue image, another
// phantom, or an inverted contrast of the same one) resampled through a smooth
// deformation by trilinear interpolation, at every voxel of the reference
// grid (floating and reference share one grid). Positions outside the
// floating image contribute the padding value 0 with their trilinear weight,
// as the trilinear seed does. The warped-image gradient is the analytic
// gradient of that trilinear interpolant with respect to the sampling
// position, in floating voxel units (one-sided at integer positions, since
// the interpolant is not differentiable there).
//
// NMI conventions (the kernels follow them):
// - an intensity v is placed at the bin position p = v * scale + offset; the
//   generator chooses scale and offset (floats, as the kernels see them) so
//   that the active voxels' intensities span p in [1, bins - 2];
// - the cubic B-spline Parzen window of p touches bins floor(p) - 1 ..
//   floor(p) + 2 with the weights bspline_basis(p - floor(p)) (they sum to 1);
//   bins outside [0, bins) are skipped;
// - the joint histogram is indexed referenceBin * warpedBins + warpedBin;
// - probabilities are bin mass / total mass; log tables hold log(p), or 0
//   for an empty bin; entropies are in nats; NMI = (H_R + H_W) / H_RW.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/smooth_noise.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds {

enum class FloatingKind {
  Same,      // the reference's own tissue image
  Other,     // the tissue image of another phantom (another subject)
  Inverted,  // 150 - the reference's tissue image (another contrast, for NMI)
};

const std::vector<std::string>& floating_kind_names();  // same, other, inverted
FloatingKind floating_kind_from_name(const std::string& name);  // throws on an unknown name

struct SimilarityOptions {
  Dim3 dims{217, 217, 217};
  double amplitude = 2.0;  // typical displacement in voxels
  MaskShape mask = MaskShape::Brain;
  FloatingKind floating = FloatingKind::Other;
  // Both images brain-extracted: exactly 0 outside their phantom's brain
  // (before warping), so windows and blocks of constant intensity exist.
  bool skull_stripped = false;
};

// Reads the variables every similarity generator accepts: dim, amplitude,
// mask, floating, skull_stripped (true | false, default false) (its `args`
// must allow them).
SimilarityOptions similarity_options(const GeneratorArgs& args);
// The names similarity_options reads, for a generator's allowed list.
std::vector<std::string> similarity_option_names(std::vector<std::string> extra);

struct SimilarityImages {
  Dim3 dims;
  std::vector<std::int32_t> active;     // sorted linear indices (the mask)
  std::vector<float> reference;         // every voxel
  std::vector<float> floating;          // every voxel, before warping
  std::vector<float> warped;            // every voxel
  std::vector<Float4> warped_gradient;  // per active voxel, w = 0
};

SimilarityImages similarity_images(const SimilarityOptions& options, std::uint64_t seed);

// The workload variables and inputs every similarity kernel has: variables
// imageDimX/Y/Z, voxelNumber, activeVoxelNumber; inputs referenceImage,
// warpedImage, activeVoxels.
fitness::Workload image_pair_workload(const SimilarityImages& images);

// Reads them back for a reference, checking sizes and active indices; errors
// name the kernel (`who`).
struct ImagePair {
  Dim3 dims;
  std::vector<std::int32_t> active;
  std::vector<float> reference, warped;
};
ImagePair read_image_pair(const fitness::Workload& w, const char* who);

// The smooth displacement (in voxels) the warp applies: three smooth random
// fields of about `amplitude` voxels.
class SmoothDisplacement {
 public:
  SmoothDisplacement(Dim3 dims, double amplitude, std::uint64_t seed);
  std::array<double, 3> at(int x, int y, int z) const {
    return {amplitude_ * x_.at(x, y, z), amplitude_ * y_.at(x, y, z), amplitude_ * z_.at(x, y, z)};
  }

 private:
  double amplitude_;
  SmoothNoise x_, y_, z_;
};

struct TrilinearSample {
  double value = 0;
  std::array<double, 3> gradient{};  // d value / d position
};

// Trilinear interpolation of `image` at (x, y, z) in voxel units, corners
// outside the image contributing `padding`.
TrilinearSample trilinear_sample(const std::vector<float>& image, Dim3 dims, double x, double y, double z,
                                 double padding);

// ---------------------------------------------------------------- NMI

struct ParzenWindow {
  int first = 0;                    // bin of weight[0]; the window covers first .. first + 3
  std::array<double, 4> weight{};   // cubic B-spline weights (sum 1)
  std::array<double, 4> derivative{};  // d weight / d position (sum 0)
};

ParzenWindow parzen_window(double position);

struct BinRescaling {
  float scale = 1;   // position = value * scale + offset
  float offset = 0;
};

// Maps the smallest and largest of `image` at the active voxels to bin
// positions margin and bins - 1 - margin (a constant image goes to position
// margin). The default margin 1 keeps every Parzen window inside the
// histogram; a negative one maps the extremes beyond it, as intensities past
// the thresholds of a clipped rescaling fall.
BinRescaling bin_rescaling(const std::vector<float>& image, const std::vector<std::int32_t>& active, int bins,
                           double margin = 1.0);

// Bin position of a float intensity as the kernels compute it, in double.
inline double bin_position(float value, BinRescaling r) {
  return static_cast<double>(value) * static_cast<double>(r.scale) + static_cast<double>(r.offset);
}

// The histogram's size and rescalings of a workload.
struct NmiBinning {
  int reference_bins = 64, warped_bins = 64;
  BinRescaling reference, warped;
};

// Reads the generator variables bins (default 64) and warped_bins (default
// bins), each 5..512, and bin_margin (default 1; -8 .. 2, the bin position
// of the extreme intensities, see bin_rescaling), and fits the rescalings to
// the images' active voxels.
NmiBinning nmi_binning(const GeneratorArgs& args, const SimilarityImages& images);
// Workload variables referenceBinNumber, warpedBinNumber, jointBinNumber,
// referenceScale, referenceOffset, warpedScale, warpedOffset; and back.
void add_binning_variables(fitness::Workload& w, const NmiBinning& binning);
NmiBinning read_binning(const fitness::Workload& w, const char* who);

// Adds one voxel's 4 x 4 Parzen weights (scaled by `mass`) to a joint
// histogram (referenceBin * warpedBins + warpedBin), skipping bins outside.
void add_to_joint_histogram(double reference_position, double warped_position, int reference_bins,
                            int warped_bins, double mass, std::vector<double>& histogram);

// The joint histogram of the active voxels, in double.
std::vector<double> joint_histogram(const std::vector<float>& reference, const std::vector<float>& warped,
                                    const std::vector<std::int32_t>& active, int reference_bins, int warped_bins,
                                    BinRescaling reference_rescaling, BinRescaling warped_rescaling);

struct NmiTables {
  double total = 0;  // histogram mass
  double reference_entropy = 0, warped_entropy = 0, joint_entropy = 0;
  double nmi = 0;
  std::vector<double> log_joint;   // reference_bins * warped_bins
  std::vector<double> log_warped;  // warped_bins (warped marginal)
};

// Throws if the histogram is empty or its size is not the product of the bins.
NmiTables nmi_tables(const std::vector<double>& histogram, int reference_bins, int warped_bins);

// d NMI / d (one warped intensity) times the histogram's total mass N, for a
// voxel at these bin positions, given the tables as the kernel reads them
// (log tables possibly float-rounded):
// (nmi * sum_ab w_R(a) w_W'(b) logJoint - sum_b w_W'(b) logWarped) * scale / H_RW.
double nmi_intensity_derivative(double reference_position, double warped_position, int reference_bins,
                                int warped_bins, const std::vector<double>& log_joint,
                                const std::vector<double>& log_warped, double nmi, double joint_entropy,
                                double warped_scale);

// ---------------------------------------------------------------- LNCC

// Local normalised cross-correlation at voxel (x, y, z) over the cube of
// half-width `radius` clipped to the image (every in-bounds voxel counts,
// active or not): cov / sqrt(var_R var_W) from the window sums of the
// intensities minus the centre voxel's (as the kernel sums them; exact here),
// 0 where either variance is not positive (a constant window).
double lncc_at(const std::vector<float>& reference, const std::vector<float>& warped, Dim3 dims, int x, int y, int z,
               int radius);

}  // namespace gi::seeds
