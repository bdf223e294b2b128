#pragma once
// A B-spline free-form deformation registration in the style of NiftyReg's
// f3d (Modat et al. 2010; the NiftyReg GPU theses in shared/papers): an image
// pyramid, a control-point grid of fixed voxel spacing refined between
// levels, normalised mutual information (or SSD) with a bending-energy and
// an optional log-Jacobian penalty, a conjugate-gradient optimiser with a
// line search, and folding correction. Every voxel- or node-level step runs
// as a library kernel on a ComputeDevice; the host only orchestrates and
// works on a few thousand values (the joint histogram's entropies, the CG
// coefficient, step sizes).
#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_set.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {

enum class Similarity { Nmi, Ssd };
// Bracketing: the maximum along each direction, bracketed and refined by a
// parabola (gi's default); NiftyReg: f3d's grow-by-1.1, halve-on-loss search.
enum class LineSearch { Bracketing, NiftyReg };

struct RegistrationOptions {
  int levels = 3;               // pyramid levels (each halves the image per axis)
  double spacing = 5;           // control-point spacing in voxels, the same at every level
  Similarity similarity = Similarity::Nmi;
  int bins = 64;                // NMI histogram bins per image
  double bending_weight = 0.005;
  double jacobian_weight = 0;   // log-Jacobian penalty; 0: off
  int max_iterations = 300;     // per level
  LineSearch line_search = LineSearch::Bracketing;
  int line_search_trials = 12;  // objective evaluations per line search, at most
  // The smallest step a line search tries, in voxels; 0: a hundredth of the
  // spacing (NiftyReg's). A level ends when steepest ascent finds nothing
  // above it.
  double min_step = 0;
  // Called after every iteration (gi register --progress).
  std::function<void(const std::string& line)> progress;
};

struct LevelReport {
  int level = 0;  // 0: the finest
  std::array<int, 3> image_dim{}, grid_dim{};
  int iterations = 0, evaluations = 0, folding_corrections = 0;
  double objective_start = 0, objective_end = 0;
  double seconds = 0;
};

struct RegistrationResult {
  Volume displacement;    // 3 components, voxels: the floating voxel of reference voxel x is x + d(x)
  Volume warped;          // the floating image resampled on the reference grid
  Volume control_points;  // the finest grid's displacements (voxels), on its own grid
  std::vector<LevelReport> levels;
  double seconds = 0;
  std::map<std::string, KernelTime> kernel_times;
};

// The library kernels a registration with `options` launches.
std::vector<std::string> registration_kernel_names(const RegistrationOptions& options);

// Throws std::runtime_error for images it cannot register (different grids:
// resample the floating image onto the reference's first; too small for the
// pyramid) and for a kernel failure, naming the kernel.
RegistrationResult register_images(const Volume& reference, const Volume& floating, const KernelSet& kernels,
                                   ComputeDevice& device, const RegistrationOptions& options);

}  // namespace gi::reg
