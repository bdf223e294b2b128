// The objective and its gradient at one pyramid level; see level_solver.hpp.
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "gi/register/grid_transform.hpp"
#include "gi/register/level_solver.hpp"

namespace gi::reg {

LevelSolver::LevelSolver(const KernelRunner& runner, const RegistrationOptions& options, int level,
                         std::array<int, 3> dim, std::array<int, 3> floating_dim, const Buffer& reference,
                         const Buffer& floating, const LevelMask* mask)
    : runner_(runner), options_(options), level_(level), dim_(dim), reference_(reference), floating_(floating) {
  ComputeDevice& d = runner.device();
  grid_dim_ = grid_dim_for(dim, options.spacing);
  voxels_ = product(dim_);
  nodes_ = product(grid_dim_);
  jacobian_nodes_ = std::size_t(grid_dim_[0] - 2) * (grid_dim_[1] - 2) * (grid_dim_[2] - 2);
  const double bins = options.bins;
  vars_ = with(level_variables(dim, options.spacing, floating_dim),
               {{"referenceBinNumber", bins}, {"warpedBinNumber", bins}, {"jointBinNumber", bins * bins},
                // Intensities in [0, 1] land on bin positions 1 .. bins - 3, so each
                // cubic Parzen window (bins floor(p) - 1 .. floor(p) + 2) stays inside.
                {"referenceScale", bins - 4}, {"referenceOffset", 1}, {"warpedScale", bins - 4}, {"warpedOffset", 1}});
  const std::size_t f4 = 16;
  // With a mask, the deformation, the warped image, its gradient and the
  // similarity run over the mask's voxels only. The kernels keep the
  // deformation at the voxel's place in the list, and the warped image and
  // its gradient at the voxel's place in the image, so the voxels outside the
  // mask keep the zeros written here: the similarity's gradient kernels then
  // run over the whole image (they read the warped gradient at the list
  // place, which is the image place only in the whole image's list) and give
  // zero outside the mask.
  active_ = active_voxel_list(d, voxels_, mask);
  active_voxels_ = active_.bytes() / 4;
  every_voxel_ = &active_;
  if (mask) {
    all_voxels_ = active_voxel_list(d, voxels_);
    every_voxel_ = &all_voxels_;
  }
  masked_vars_ = with(vars_, {{"activeVoxelNumber", static_cast<double>(active_voxels_)}});
  deformation_ = Buffer(d, voxels_ * f4);
  warped_ = Buffer(d, voxels_ * 4);
  warped_gradient_ = Buffer(d, voxels_ * f4);
  warped_.zero();
  warped_gradient_.zero();
  voxel_gradient_ = Buffer(d, voxels_ * f4);
  voxel_values_ = Buffer(d, voxels_ * 4);
  histogram_ = Buffer(d, std::size_t(options.bins) * options.bins * 4);
  log_joint_ = Buffer(d, histogram_.bytes());
  log_warped_ = Buffer(d, std::size_t(options.bins) * 4);
  for (Buffer* b : {&best_grid_, &trial_grid_, &gradient_, &node_term_, &conjugate_g_, &conjugate_h_})
    *b = Buffer(d, nodes_ * f4);
  best_grid_.zero();
  second_derivatives_ = Buffer(d, 6 * nodes_ * f4);
  jacobian_matrices_ = Buffer(d, 9 * jacobian_nodes_ * 4);
  jacobian_determinants_ = Buffer(d, jacobian_nodes_ * 4);
  node_values_ = Buffer(d, std::max(nodes_, jacobian_nodes_) * 4);
  scalars_ = Buffer(d, 8 * 4);
  for (Buffer& b : sum_slots_) b = Buffer(d, 4);
}

void LevelSolver::launch_sum(const Buffer& values, std::size_t count, int slot) {
  runner_.run("tools/sum_reduction", {{"values", &values}, {"sum", &sum_slots_[static_cast<std::size_t>(slot)]}},
              with(vars_, {{"valueNumber", static_cast<double>(count)}}));
}

double LevelSolver::entropies_and_log_probabilities(const std::vector<float>& h) {
  const auto start = std::chrono::steady_clock::now();
  const int bins = options_.bins;
  const double total = std::accumulate(h.begin(), h.end(), 0.0);
  if (!(total > 0)) throw std::runtime_error("the joint histogram is empty: no voxel overlaps the floating image");
  std::vector<double> pr(bins, 0.0), pw(bins, 0.0);
  log_joint_host_.assign(h.size(), 0.f);
  log_warped_host_.assign(static_cast<std::size_t>(bins), 0.f);
  double hrw = 0;
  for (int r = 0; r < bins; ++r)
    for (int w = 0; w < bins; ++w) {
      const double p = h[r * bins + w] / total;
      pr[r] += p;
      pw[w] += p;
      if (p > 0) {
        const double log_p = std::log(p);
        log_joint_host_[r * bins + w] = static_cast<float>(log_p);
        hrw -= p * log_p;
      }
    }
  double hr = 0, hw = 0;
  for (int b = 0; b < bins; ++b) {
    if (pr[b] > 0) hr -= pr[b] * std::log(pr[b]);
    if (pw[b] > 0) {
      const double log_p = std::log(pw[b]);
      hw -= pw[b] * log_p;
      log_warped_host_[b] = static_cast<float>(log_p);
    }
  }
  tables_on_device_ = false;  // sent by gradient(), the only reader
  joint_entropy_ = hrw;
  nmi_ = (hr + hw) / hrw;
  entropy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return nmi_;
}

// The device and the host overlap: the histogram is read back first, then
// the penalties' kernels and every sum are launched, and the host works out
// the entropies while the device runs them; the sums are read after that.
// The log tables go to the device only when a gradient needs them.
Objective LevelSolver::evaluate(const Buffer& grid) {
  ++evaluations_;
  runner_.run("bspline/deformation_field",
              {{"controlPointGrid", &grid}, {"activeVoxels", &active_}, {"deformationField", &deformation_}},
              masked_vars_);
  runner_.run("resampling/trilinear",
              {{"floatingImage", &floating_}, {"deformationField", &deformation_}, {"activeVoxels", &active_},
               {"warpedImage", &warped_}},
              masked_vars_);
  const bool nmi = options_.similarity == Similarity::Nmi;
  std::vector<float> histogram;
  for (const Buffer& b : sum_slots_) b.zero();  // the sum kernel adds into its slot
  if (nmi) {
    histogram_.zero();
    runner_.run("similarity/nmi_joint_histogram",
                {{"referenceImage", &reference_}, {"warpedImage", &warped_}, {"activeVoxels", &active_},
                 {"jointHistogram", &histogram_}},
                masked_vars_);
    histogram = histogram_.download<float>();
  } else {
    runner_.run("similarity/ssd_values",
                {{"referenceImage", &reference_}, {"warpedImage", &warped_}, {"activeVoxels", &active_},
                 {"ssdValues", &voxel_values_}},
                masked_vars_);
    launch_sum(voxel_values_, active_voxels_, kSsdSlot);
  }
  // The penalties use NiftyReg's normalised grid units (derivatives per
  // control-point spacing), so their weights mean the same as f3d's -be and -jl.
  const fitness::Variables unit = with(vars_, {{"spacingX", 1}, {"spacingY", 1}, {"spacingZ", 1}});
  if (options_.bending_weight > 0) {
    runner_.run("bspline/bending_energy", {{"controlPointGrid", &grid}, {"bendingEnergy", &node_values_}}, unit);
    launch_sum(node_values_, nodes_, kBendingSlot);
  }
  if (options_.jacobian_weight > 0) {
    runner_.run("bspline/log_jacobian_penalty", {{"controlPointGrid", &grid}, {"penalty", &node_values_}}, vars_);
    launch_sum(node_values_, jacobian_nodes_, kJacobianSlot);
  }
  Objective o;
  if (nmi) o.similarity = entropies_and_log_probabilities(histogram);
  const auto read_sum = [&](int slot) { return double(sum_slots_[static_cast<std::size_t>(slot)].download<float>()[0]); };
  if (!nmi) o.similarity = -read_sum(kSsdSlot) / static_cast<double>(active_voxels_);
  if (options_.bending_weight > 0) o.bending = read_sum(kBendingSlot) / static_cast<double>(nodes_);
  if (options_.jacobian_weight > 0) o.jacobian = read_sum(kJacobianSlot) / static_cast<double>(jacobian_nodes_);
  const double w = options_.bending_weight + options_.jacobian_weight;
  o.value = (1 - w) * o.similarity - options_.bending_weight * o.bending - options_.jacobian_weight * o.jacobian;
  return o;
}

void LevelSolver::gradient(const Buffer& grid) {
  runner_.run("resampling/warped_gradient",
              {{"floatingImage", &floating_}, {"deformationField", &deformation_}, {"activeVoxels", &active_},
               {"warpedGradient", &warped_gradient_}},
              masked_vars_);
  const bool nmi = options_.similarity == Similarity::Nmi;
  if (nmi) {
    if (!tables_on_device_) {
      log_joint_.upload(log_joint_host_);
      log_warped_.upload(log_warped_host_);
      tables_on_device_ = true;
    }
    runner_.run("similarity/nmi_gradient",
                {{"referenceImage", &reference_}, {"warpedImage", &warped_}, {"warpedGradient", &warped_gradient_},
                 {"activeVoxels", every_voxel_}, {"logJointProbability", &log_joint_},
                 {"logWarpedProbability", &log_warped_}, {"nmiGradient", &voxel_gradient_}},
                with(vars_, {{"nmiValue", nmi_}, {"jointEntropy", joint_entropy_}}));
  } else {
    runner_.run("similarity/ssd_gradient",
                {{"referenceImage", &reference_}, {"warpedImage", &warped_}, {"warpedGradient", &warped_gradient_},
                 {"activeVoxels", every_voxel_}, {"ssdGradient", &voxel_gradient_}},
                vars_);
  }
  runner_.run("tools/voxel_to_node_gradient", {{"voxelGradient", &voxel_gradient_}, {"nodeGradient", &gradient_}},
              vars_);
  // gradient_ is now N times the similarity's gradient for NMI (to be
  // raised) and N times the SSD's gradient for SSD (to be lowered). The
  // penalties are added with the factor that keeps their weights relative to
  // the similarity's: in units of that factor, and with the similarity's
  // direction. The optimiser normalises the result's length.
  const double sign = nmi ? 1.0 : -1.0;
  const double n = static_cast<double>(active_voxels_);
  const double w = options_.bending_weight + options_.jacobian_weight;
  if (options_.bending_weight > 0) {
    const fitness::Variables unit = with(vars_, {{"spacingX", 1}, {"spacingY", 1}, {"spacingZ", 1}});
    runner_.run("bspline/second_derivatives", {{"controlPointGrid", &grid}, {"secondDerivatives", &second_derivatives_}},
                unit);
    runner_.run("bspline/bending_energy_gradient", {{"secondDerivatives", &second_derivatives_}, {"gradient", &node_term_}},
                unit);
    const double alpha = -sign * n * options_.bending_weight / ((1 - w) * static_cast<double>(nodes_));
    runner_.run("optimiser/control_point_update",
                {{"bestControlPointGrid", &gradient_}, {"searchDirection", &node_term_}, {"controlPointGrid", &trial_grid_}},
                with(vars_, {{"alpha", alpha}}));
    gradient_.copy_from(trial_grid_);
  }
  if (options_.jacobian_weight > 0) {
    runner_.run("bspline/jacobian_nodes",
                {{"controlPointGrid", &grid}, {"jacobianMatrices", &jacobian_matrices_},
                 {"jacobianDeterminants", &jacobian_determinants_}},
                vars_);
    runner_.run("bspline/log_jacobian_gradient_approx",
                {{"jacobianMatrices", &jacobian_matrices_}, {"gradient", &node_term_}}, vars_);
    const double alpha = -sign * n * options_.jacobian_weight / ((1 - w) * static_cast<double>(jacobian_nodes_));
    runner_.run("optimiser/control_point_update",
                {{"bestControlPointGrid", &gradient_}, {"searchDirection", &node_term_}, {"controlPointGrid", &trial_grid_}},
                with(vars_, {{"alpha", alpha}}));
    gradient_.copy_from(trial_grid_);
  }
}

}  // namespace gi::reg
