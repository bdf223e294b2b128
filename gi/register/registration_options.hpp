#pragma once
// What a registration (gi/register/registration.hpp) is asked to do, and what
// each of its pyramid levels reports: shared by the registration and its
// levels (gi/register/level_solver.hpp).
#include <array>
#include <functional>
#include <string>

namespace gi::reg {

enum class Similarity { Nmi, Ssd };
enum class AffineMode { None, Rigid, Affine };

// The affine pre-alignment by block matching (gi/register/affine_stage.hpp).
struct AffineOptions {
  AffineMode mode = AffineMode::Affine;  // a rigid, then an affine fit; Rigid: the rigid one only; None: no stage
  int rigid_iterations = 5;     // at the coarsest level (every level for Rigid), at most (reg_aladin's default)
  int affine_iterations = 5;    // per level, after any rigid ones, at most
  double block_share = 0.5;     // of the blocks with texture, the most textured share takes part
  double inlier_share = 0.5;    // of the matches, the best share is kept by the trimmed fit
  int search_radius = 3;        // voxels, at every level
};
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
  AffineOptions affine;
  // The B-spline stage; off (--affine-only): the result is the affine alone.
  bool bspline = true;
  // Whether the result holds the dense displacement field (gi register
  // computes it only for --write displacement or deformation).
  bool dense_displacement = true;
  // Called after every iteration (gi register --progress).
  std::function<void(const std::string& line)> progress;
};

struct LevelReport {
  int level = 0;  // 0: the finest
  std::array<int, 3> image_dim{}, grid_dim{};
  int iterations = 0, evaluations = 0, folding_corrections = 0;
  double objective_start = 0, objective_end = 0;
  double seconds = 0;
  // Of `seconds`: the host's work on the NMI's entropies and log tables
  // (every evaluation; the device runs the penalties' kernels meanwhile).
  double entropy_seconds = 0;
};

}  // namespace gi::reg
