#pragma once
// One pyramid level of the registration (gi/register/registration.hpp): the
// level's images and control-point grid on the device, the objective and its
// gradient (level_objective.cpp), and the conjugate-gradient optimiser with
// its line search and folding correction (level_optimiser.cpp).
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_runner.hpp"
#include "gi/register/kernel_set.hpp"
#include "gi/register/reference_mask.hpp"
#include "gi/register/registration_options.hpp"

namespace gi::reg {

// The objective's parts at one control-point grid.
struct Objective {
  double value = 0;       // (1 - wB - wJ) * similarity - wB * bending - wJ * log-Jacobian; higher is better
  double similarity = 0;  // NMI, or -SSD / voxels
  double bending = 0;     // mean bending energy per control point
  double jacobian = 0;    // mean log-Jacobian penalty per node
};

class LevelSolver {
 public:
  // `reference` and `floating`: the level's images, intensities in [0, 1].
  // `floating_dim`: the floating image's level, on its own grid. `mask`: the
  // level's reference mask (null: every voxel), which the similarity and its
  // gradient are restricted to.
  LevelSolver(const KernelRunner& runner, const RegistrationOptions& options, int level, std::array<int, 3> dim,
              std::array<int, 3> floating_dim, const Buffer& reference, const Buffer& floating,
              const LevelMask* mask = nullptr);

  std::array<int, 3> grid_dim() const { return grid_dim_; }
  // The grid's displacements (float4 per control point), read and written by the level.
  Buffer& grid() { return best_grid_; }
  // Optimises the grid in place; returns the level's report.
  LevelReport optimise();
  // Launch variables of this level (image and grid sizes, spacing).
  const fitness::Variables& variables() const { return vars_; }

 private:
  // level_objective.cpp
  Objective evaluate(const Buffer& grid);  // leaves the deformation, warped image and histogram of `grid`
  void gradient(const Buffer& grid);       // into gradient_, from evaluate(grid)'s state
  // Launches the sum of `count` values into sum_slots_[slot] (zeroed by evaluate).
  void launch_sum(const Buffer& values, std::size_t count, int slot);
  // NMI from the joint histogram read back; fills the host's log tables.
  double entropies_and_log_probabilities(const std::vector<float>& histogram);
  // level_optimiser.cpp
  double max_length(const Buffer& field);
  void move_along(const Buffer& from, double alpha, Buffer& to);  // to = from + alpha * conjugate_h_
  double step_niftyreg(double first, double length, double sign, double min_step, double max_step, Objective& best,
                       bool& state_is_best);
  double step_bracketing(double first, double length, double sign, double min_step, double max_step, Objective& best,
                         bool& state_is_best);
  int correct_folding();
  std::string progress_line(int iteration, const Objective& o, double step, double seconds) const;

  const KernelRunner& runner_;
  const RegistrationOptions& options_;
  int level_;
  std::array<int, 3> dim_, grid_dim_;
  std::size_t voxels_, nodes_, jacobian_nodes_;
  std::size_t active_voxels_;  // in the mask; voxels_ without one
  // vars_: the whole image (activeVoxelNumber = voxels_); masked_vars_: the mask's voxels.
  fitness::Variables vars_, masked_vars_;
  const Buffer& reference_;
  const Buffer& floating_;
  // active_: the mask's voxels; every_voxel_: the whole image's list (active_ itself without a mask).
  Buffer active_, all_voxels_;
  const Buffer* every_voxel_ = nullptr;
  Buffer deformation_, warped_, warped_gradient_, voxel_gradient_, histogram_, log_joint_, log_warped_;
  Buffer best_grid_, trial_grid_, gradient_, node_term_, second_derivatives_, conjugate_g_, conjugate_h_;
  Buffer jacobian_matrices_, jacobian_determinants_, node_values_, scalars_, voxel_values_;
  // One sum per slot: an evaluation launches every sum, then reads them back
  // once the host's own work is done. The device runs its kernels in launch
  // order, so the penalties can share node_values_ as they did when each sum
  // was read back at once.
  static constexpr int kSsdSlot = 0, kBendingSlot = 1, kJacobianSlot = 2, kSumSlots = 3;
  std::array<Buffer, kSumSlots> sum_slots_;
  // The NMI's log tables of the last evaluation, and whether the device has them.
  std::vector<float> log_joint_host_, log_warped_host_;
  bool tables_on_device_ = false;
  double nmi_ = 0, joint_entropy_ = 0;
  double entropy_seconds_ = 0;  // host time in entropies_and_log_probabilities
  int evaluations_ = 0;
};

}  // namespace gi::reg
