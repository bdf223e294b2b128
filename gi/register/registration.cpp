#include "gi/register/registration.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "gi/register/affine_stage.hpp"
#include "gi/register/grid_transform.hpp"
#include "gi/register/image_pyramid.hpp"
#include "gi/register/level_solver.hpp"

namespace gi::reg {

std::vector<std::string> registration_kernel_names(const RegistrationOptions& options) {
  std::vector<std::string> names = {
      "tools/intensity_minmax",       "tools/intensity_rescale",      "tools/pyramid_level",
      "bspline/deformation_field",    "resampling/trilinear",         "resampling/warped_gradient",
      "tools/voxel_to_node_gradient", "tools/sum_reduction",          "tools/max_vector_length",
      "optimiser/cg_init",            "optimiser/cg_dot_products",    "optimiser/cg_direction_update",
      "optimiser/control_point_update", "bspline/jacobian_nodes",     "bspline/folding_correction",
      "bspline/refine_grid",          "deformation/deformation_to_displacement"};
  if (options.affine.mode != AffineMode::None)
    names.insert(names.end(), {"blockmatching/ncc_block_matching", "global/affine_deformation"});
  if (options.similarity == Similarity::Nmi) {
    names.insert(names.end(), {"similarity/nmi_joint_histogram", "similarity/nmi_gradient"});
  } else {
    names.insert(names.end(), {"similarity/ssd_values", "similarity/ssd_gradient"});
  }
  if (options.bending_weight > 0)
    names.insert(names.end(), {"bspline/bending_energy", "bspline/second_derivatives", "bspline/bending_energy_gradient"});
  if (options.jacobian_weight > 0)
    names.insert(names.end(), {"bspline/log_jacobian_penalty", "bspline/log_jacobian_gradient_approx"});
  return names;
}

void check_registration_inputs(const Volume& reference, const Volume& floating, const RegistrationOptions& options,
                               const std::string& reference_name, const std::string& floating_name) {
  if (reference.components != 1 || floating.components != 1)
    throw std::runtime_error("the reference and floating images must be scalar images");
  if (options.levels < 1 || options.levels > 6) throw std::runtime_error("levels must be 1 to 6");
  if (!(options.spacing >= 1)) throw std::runtime_error("the control-point spacing must be at least one voxel");
  if (options.bins < 8 || options.bins > 256) throw std::runtime_error("the histogram needs 8 to 256 bins");
  if (options.bending_weight < 0 || options.jacobian_weight < 0 || options.bending_weight + options.jacobian_weight >= 1)
    throw std::runtime_error("the penalty weights must be >= 0 and sum to less than 1");
  for (const auto& [image, what] : {std::pair{&reference, &reference_name}, std::pair{&floating, &floating_name}}) {
    std::array<int, 3> d = image->dim;
    for (int l = 1; l < options.levels; ++l) d = half(d);
    for (int a = 0; a < 3; ++a)
      if (d[a] < 4)
        throw std::runtime_error(*what + " (" + std::to_string(image->dim[0]) + "x" + std::to_string(image->dim[1]) +
                                 "x" + std::to_string(image->dim[2]) + ") is too small for " +
                                 std::to_string(options.levels) + " pyramid levels");
  }
}

RegistrationResult register_images(const Volume& reference, const Volume& floating, const KernelSet& kernels,
                                   ComputeDevice& device, const RegistrationOptions& options,
                                   const Volume* reference_mask) {
  const auto start = std::chrono::steady_clock::now();
  check_registration_inputs(reference, floating, options);
  if (reference_mask) check_reference_mask(*reference_mask, reference);
  for (const std::string& name : registration_kernel_names(options)) device.prepare(kernels.get(name));
  const KernelRunner runner(kernels, device);
  const int levels = options.levels;
  const std::vector<std::array<int, 3>> dims = pyramid_dims(reference.dim, levels);
  const std::vector<std::array<int, 3>> floating_dims = pyramid_dims(floating.dim, levels);

  Buffer raw_floating(device, floating.voxels() * 4);
  raw_floating.upload(floating.data);
  std::vector<Buffer> refs, flos;
  {
    Buffer raw_reference(device, reference.voxels() * 4);
    raw_reference.upload(reference.data);
    refs = image_pyramid(runner, rescaled(runner, raw_reference, reference.voxels(), "reference"), dims);
    flos = image_pyramid(runner, rescaled(runner, raw_floating, floating.voxels(), "floating"), floating_dims);
  }
  const std::vector<LevelMask> masks = reference_mask ? mask_pyramid(runner, *reference_mask, dims) : std::vector<LevelMask>{};

  RegistrationResult result;
  {
    std::vector<const Buffer*> ref_levels, flo_levels;
    for (int l = 0; l < levels; ++l) ref_levels.push_back(&refs[l]), flo_levels.push_back(&flos[l]);
    result.affine = align_affine(runner, ref_levels, flo_levels, dims, floating_dims, reference.voxel_to_world,
                                 floating.voxel_to_world, options.affine, masks);
  }
  Buffer coarse_grid;
  std::array<int, 3> coarse_dim{};
  std::unique_ptr<LevelSolver> solver;
  // --affine-only: the finest grid is the affine's, no B-spline level runs.
  const int first_level = options.bspline ? levels - 1 : -1;
  Buffer affine_grid;
  if (!options.bspline) {
    const std::array<int, 3> gd = grid_dim_for(reference.dim, options.spacing);
    affine_grid = Buffer(device, product(gd) * 16);
    affine_grid.upload(grid_of_affine(result.affine.voxel_transform, 0, gd, options.spacing));
  }
  for (int l = first_level; l >= 0; --l) {
    solver = std::make_unique<LevelSolver>(runner, options, l, dims[l], floating_dims[l], refs[l], flos[l],
                                          masks.empty() ? nullptr : &masks[l]);
    if (l == levels - 1) {
      // The coarsest grid starts as the affine (zero without one).
      solver->grid().upload(grid_of_affine(result.affine.voxel_transform, l, solver->grid_dim(), options.spacing));
    } else {
      // The coarse spline subdivided once; a coarse voxel is two fine ones.
      const std::array<int, 3> fine = solver->grid_dim();
      runner.run("bspline/refine_grid", {{"coarseGrid", &coarse_grid}, {"fineGrid", &solver->grid()}},
                 {{"coarseDimX", coarse_dim[0]}, {"coarseDimY", coarse_dim[1]}, {"coarseDimZ", coarse_dim[2]},
                  {"fineDimX", fine[0]}, {"fineDimY", fine[1]}, {"fineDimZ", fine[2]},
                  {"coarseNodeNumber", static_cast<double>(product(coarse_dim))},
                  {"fineNodeNumber", static_cast<double>(product(fine))}, {"displacementScale", 2}});
    }
    result.levels.push_back(solver->optimise());
    if (l > 0) {
      coarse_dim = solver->grid_dim();
      coarse_grid = Buffer(device, solver->grid().bytes());
      coarse_grid.copy_from(solver->grid());
    }
  }

  // The finest grid applied to the reference grid: the floating image
  // through it and, when asked, the dense displacement.
  // What is written is the grid in world millimetres; the warped image and
  // the displacement are made from that, as gi transform makes them.
  const Buffer& final_grid = solver ? solver->grid() : affine_grid;
  const std::array<int, 3> gd = grid_dim_for(reference.dim, options.spacing);
  result.control_points =
      control_point_volume(final_grid.download<float>(), gd, reference, floating.voxel_to_world, options.spacing);
  const auto transform_to = [&](const Volume& target) {
    return GridTransform(runner, reference.dim,
                         control_point_grid(result.control_points, "(the registration's grid)", reference,
                                            "(the reference)", target.voxel_to_world),
                         target.dim);
  };
  result.warped = reference;
  result.warped.data = transform_to(floating).warp(raw_floating);
  if (options.dense_displacement) result.displacement = transform_to(reference).displacement(reference);
  result.kernel_times = device.kernel_times();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace gi::reg
