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
#include <map>
#include <string>
#include <vector>

#include "gi/register/affine_stage.hpp"
#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_set.hpp"
#include "gi/register/reference_mask.hpp"
#include "gi/register/registration_options.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {

struct RegistrationResult {
  Volume displacement;    // 3 components, voxels: the floating voxel of reference voxel x is x + d(x); empty unless options.dense_displacement
  Volume warped;          // the floating image resampled on the reference grid
  Volume control_points;  // the finest grid's displacements (voxels), on its own grid
  AffineResult affine;            // the pre-alignment (identity when it did not run)
  std::vector<LevelReport> levels;
  double seconds = 0;
  std::map<std::string, KernelTime> kernel_times;
};

// The library kernels a registration with `options` launches.
std::vector<std::string> registration_kernel_names(const RegistrationOptions& options);

// Throws std::runtime_error naming the image (by `*_name`) and the problem:
// not scalar, too small for the pyramid; or bad options.
void check_registration_inputs(const Volume& reference, const Volume& floating, const RegistrationOptions& options,
                               const std::string& reference_name = "the reference image",
                               const std::string& floating_name = "the floating image");

// The two images may lie on different grids (sizes, voxel sizes, sforms):
// the floating image is resampled through world coordinates, from the
// headers' alignment on. `reference_mask` (optional, on the reference's
// grid; gi/register/reference_mask.hpp) restricts the similarity measure and
// the affine stage's blocks to its voxels. Throws std::runtime_error for
// images it cannot register (check_registration_inputs,
// check_reference_mask; no block matched by the affine stage) and for a
// kernel failure, naming the kernel.
RegistrationResult register_images(const Volume& reference, const Volume& floating, const KernelSet& kernels,
                                   ComputeDevice& device, const RegistrationOptions& options,
                                   const Volume* reference_mask = nullptr);

}  // namespace gi::reg
