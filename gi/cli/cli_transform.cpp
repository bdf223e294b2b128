// `gi transform --reference REF --cpp GRID [--displacement FILE] [--deformation FILE] [--floating FLO --res FILE]`:
// what reg_transform and reg_resample do for a control-point grid gi register
// wrote: the dense displacement (voxels) and deformation (world mm) on the
// reference grid, and a floating image resampled through it, with the same
// library kernels (gi/register/grid_transform.hpp). gi register writes only
// the grid and the warped image by default, so the dense fields a measurement
// such as `gi accuracy` needs are made here, outside the timed run.
#include <iostream>
#include <memory>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/registration_device.hpp"
#include "gi/register/grid_transform.hpp"
#include "gi/register/volume.hpp"
#include "gi/register/wall_times.hpp"

namespace gi::cli {
namespace fs = std::filesystem;

namespace {

struct TransformArgs {
  std::string reference, cpp, floating, res, displacement, deformation;
  KernelChoice choice;
};

const std::vector<std::string> kTransformKernels = {"bspline/deformation_field", "resampling/trilinear",
                                                    "deformation/deformation_to_displacement"};

void run_transform(const TransformArgs& a) {
  reg::WallTimes wall(reg::process_age_seconds());
  if (a.displacement.empty() && a.deformation.empty() && a.res.empty())
    throw std::runtime_error("nothing to write: give --displacement, --deformation or --res");
  if (a.res.empty() != a.floating.empty()) throw std::runtime_error("--res and --floating go together");
  const reg::Volume reference = reg::read_nifti(a.reference);
  const reg::Volume cpp = reg::read_nifti(a.cpp, 3);
  // For the dense fields the grid's target is the reference's own voxels;
  // for resampling, the floating image's (which may lie on another grid).
  const reg::ControlPointGrid grid = reg::control_point_grid(cpp, a.cpp, reference, a.reference, reference.voxel_to_world);
  reg::Volume floating;
  if (!a.floating.empty()) floating = reg::read_nifti(a.floating);
  RegistrationDevice rd = open_registration_device(a.choice);
  const reg::KernelSet kernels(kTransformKernels, rd.kernel_options);
  for (const auto& [name, k] : kernels.kernels()) rd.device->prepare(k);
  wall.lap("reading, start-up and compiling");

  const reg::KernelRunner runner(kernels, *rd.device);
  if (!a.res.empty()) {
    const reg::ControlPointGrid to_floating =
        reg::control_point_grid(cpp, a.cpp, reference, a.reference, floating.voxel_to_world);
    reg::Buffer image(*rd.device, floating.voxels() * 4);
    image.upload(floating.data);
    reg::Volume warped = reference;
    warped.data = reg::GridTransform(runner, reference.dim, to_floating, floating.dim).warp(image);
    reg::write_nifti(a.res, warped, "gi transform: warped floating image");
  }
  if (!a.displacement.empty() || !a.deformation.empty()) {
    const reg::Volume displacement =
        reg::GridTransform(runner, reference.dim, grid, reference.dim).displacement(reference);
    if (!a.displacement.empty()) reg::write_nifti(a.displacement, displacement, "gi transform: displacement, voxels");
    if (!a.deformation.empty())
      reg::write_nifti(a.deformation, reg::world_deformation(displacement), "gi transform: deformation, mm");
  }
  wall.lap("transforming and writing");
  std::cout << "grid " << grid.dim[0] << "x" << grid.dim[1] << "x" << grid.dim[2] << ", spacing " << grid.spacing
            << " voxels, on " << rd.device->name() << "\n"
            << wall.table();
}

}  // namespace

void add_transform(CLI::App& app) {
  auto* cmd = app.add_subcommand("transform",
                                 "Make the dense displacement and deformation of a control-point grid written by gi "
                                 "register, or resample a floating image through it, with the library's kernels");
  auto a = std::make_shared<TransformArgs>();
  cmd->add_option("--reference", a->reference, "the reference image the grid was registered on")->required();
  cmd->add_option("--cpp", a->cpp, "the control-point grid (gi register's control_points.nii.gz)")->required();
  cmd->add_option("--displacement", a->displacement, "write the displacement (voxels) here");
  cmd->add_option("--deformation", a->deformation, "write the deformation (world mm) here");
  cmd->add_option("--floating", a->floating, "the floating image to resample onto the reference's grid (with --res)");
  cmd->add_option("--res", a->res, "write the resampled floating image here");
  add_kernel_choice_options(cmd, a->choice);
  cmd->callback([a] { run_transform(*a); });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("transform", gi::cli::add_transform)
