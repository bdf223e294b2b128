// `gi register --reference REF --floating FLO --out DIR [--kernels seeds|evolved|evolved/<gpu>]`:
// a B-spline free-form registration (gi/register/registration.hpp) whose every
// voxel- and node-level step is a library kernel, the seeds' or the evolved
// ones. Writes the displacement, the deformation, the warped image and the
// control-point grid as NIfTI, register.json and profile.md.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "fitness/process/atomic_file.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/library/library_root.hpp"
#include "gi/publish/versions.hpp"
#include "gi/register/emulated_device.hpp"
#include "gi/register/gpu_device.hpp"
#include "gi/register/registration.hpp"
#include "gi/register/run_report.hpp"
#include "gi/register/volume.hpp"

namespace gi::cli {
namespace fs = std::filesystem;

namespace {

struct RegisterArgs {
  std::string reference, floating, out, kernels = "seeds", similarity = "nmi", cache_dir, line_search = "bracketing";
  std::string seeds;  // empty: the library's (gi/library/library_root.hpp)
  reg::RegistrationOptions options;
  int device = 0;
  bool progress = false, emulate = false;
};

// The deformation in world millimetres (NiftyReg's convention): where each
// reference voxel's point lies, through the floating image's voxel-to-world.
reg::Volume world_deformation(const reg::Volume& displacement) {
  reg::Volume d = displacement;
  const std::size_t n = d.voxels();
  const auto& m = displacement.voxel_to_world;
  for (int z = 0; z < d.dim[2]; ++z)
    for (int y = 0; y < d.dim[1]; ++y)
      for (int x = 0; x < d.dim[0]; ++x) {
        const std::size_t i = d.index(x, y, z);
        const double p[3] = {x + displacement.data[i], y + displacement.data[n + i], z + displacement.data[2 * n + i]};
        for (int r = 0; r < 3; ++r)
          d.data[r * n + i] = static_cast<float>(m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3]);
      }
  return d;
}

void run_register(const RegisterArgs& a) {
  reg::RegistrationOptions options = a.options;
  if (a.similarity == "ssd") options.similarity = reg::Similarity::Ssd;
  else if (a.similarity != "nmi") throw std::runtime_error("--similarity must be nmi or ssd, not '" + a.similarity + "'");
  if (a.line_search == "niftyreg") options.line_search = reg::LineSearch::NiftyReg;
  else if (a.line_search != "bracketing")
    throw std::runtime_error("--line-search must be bracketing or niftyreg, not '" + a.line_search + "'");
  const reg::Volume reference = reg::read_nifti(a.reference);
  const reg::Volume floating = reg::read_nifti(a.floating);
  reg::require_same_grid(reference, a.reference, floating, a.floating);

  std::unique_ptr<reg::ComputeDevice> device;
  reg::KernelSetOptions ko;
  ko.seeds_root = a.seeds.empty() ? library().seeds() : fs::path(a.seeds);
  if (!a.cache_dir.empty()) ko.cache_dir = fs::path(a.cache_dir);
  std::string gpu_name;
  if (a.emulate) {
    device = std::make_unique<reg::EmulatedDevice>();
  } else {
    auto gpu = std::make_unique<reg::GpuDevice>(a.device);
    ko.arch = gpu->arch();
    gpu_name = gpu->name();
    device = std::move(gpu);
  }
  if (a.kernels == "evolved") {
    if (gpu_name.empty()) throw std::runtime_error("--kernels evolved needs a GPU; name the folder: --kernels evolved/<gpu>");
    ko.evolved_dir = library().evolved() / gpu_slug(gpu_name);
  } else if (a.kernels != "seeds") {
    // evolved/<gpu> names the library's folder unless the working directory has one.
    fs::path folder(a.kernels);
    std::error_code ec;
    if (folder.is_relative() && !fs::exists(folder, ec) && fs::exists(library().root / folder, ec))
      folder = library().root / folder;
    ko.evolved_dir = folder;
  }
  const reg::KernelSet kernels(reg::registration_kernel_names(options), ko);
  std::cout << "device: " << device->name() << "\n";
  for (const auto& [name, k] : kernels.kernels()) std::cout << "kernel " << name << ": " << k.origin << "\n";
  if (a.progress) options.progress = [](const std::string& line) { std::cout << line << std::endl; };

  const reg::RegistrationResult result = reg::register_images(reference, floating, kernels, *device, options);

  const fs::path out(a.out);
  fs::create_directories(out);
  reg::write_nifti(out / "displacement.nii.gz", result.displacement, "gi register: displacement, voxels");
  reg::write_nifti(out / "deformation.nii.gz", world_deformation(result.displacement), "gi register: deformation, mm");
  reg::write_nifti(out / "warped.nii.gz", result.warped, "gi register: warped floating image");
  reg::write_nifti(out / "control_points.nii.gz", result.control_points, "gi register: control-point displacements, voxels");
  nlohmann::json record = reg::run_record(result, options, kernels, device->name());
  record["reference"] = a.reference;
  record["floating"] = a.floating;
  record["kernels_folder"] = a.kernels;
  fitness::write_file_atomically(out / "register.json", record.dump(2) + "\n");
  const std::string table = reg::profile_table(result);
  fitness::write_file_atomically(out / "profile.md", table);
  std::cout << table << "registered in " << result.seconds << " s; results in " << out.string() << "\n";
}

}  // namespace

void add_register(CLI::App& app) {
  auto* cmd = app.add_subcommand("register", "B-spline free-form registration of two images with the library's "
                                             "kernels (seeds or evolved), NiftyReg f3d style");
  auto a = std::make_shared<RegisterArgs>();
  cmd->add_option("--reference", a->reference, "reference image (.nii or .nii.gz)")->required();
  cmd->add_option("--floating", a->floating, "floating image, on the reference's voxel grid")->required();
  cmd->add_option("--out", a->out, "folder for the results")->required();
  cmd->add_option("--kernels", a->kernels,
                  "seeds (default), evolved (this GPU's folder in the library's evolved/) or a folder evolved/<gpu>; a kernel "
                  "without an evolved folder runs as its seed, and the log says which");
  cmd->add_option("--seeds", a->seeds, "the seed library (its specs give every launch; default: the library's seeds/, "
                                       "see gi doctor)");
  cmd->add_option("--levels", a->options.levels, "pyramid levels (default 3)");
  cmd->add_option("--spacing", a->options.spacing, "control-point spacing in voxels at every level (default 5)");
  cmd->add_option("--similarity", a->similarity, "nmi (default) or ssd");
  cmd->add_option("--bins", a->options.bins, "NMI histogram bins (default 64)");
  cmd->add_option("--bending-weight", a->options.bending_weight, "bending-energy weight (default 0.005)");
  cmd->add_option("--jacobian-weight", a->options.jacobian_weight, "log-Jacobian weight (default 0: off)");
  cmd->add_option("--max-iterations", a->options.max_iterations, "iterations per level at most (default 300)");
  cmd->add_option("--line-search", a->line_search,
                  "bracketing (default: the maximum along each direction, refined by a parabola) or niftyreg "
                  "(f3d's grow-by-1.1, halve-on-loss)");
  cmd->add_option("--min-step", a->options.min_step,
                  "smallest line-search step in voxels; a level ends when none improves (default spacing / 100)");
  cmd->add_option("--device", a->device, "CUDA device (default 0)");
  cmd->add_option("--cache-dir", a->cache_dir, "compile cache folder");
  cmd->add_flag("--progress", a->progress, "print one line per iteration: level, iteration, objective, time");
  cmd->add_flag("--emulate", a->emulate, "run the kernels in the CPU emulator (tests; tiny images only)");
  cmd->callback([a] { run_register(*a); });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("register", gi::cli::add_register)
