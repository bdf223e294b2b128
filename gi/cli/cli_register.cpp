// `gi register --reference REF --floating FLO --out DIR [--kernels seeds|evolved|evolved/<gpu>]`:
// a B-spline free-form registration (gi/register/registration.hpp) whose every
// voxel- and node-level step is a library kernel, the seeds' or the evolved
// ones, after an affine pre-alignment by block matching as reg_aladin's.
// Writes what reg_f3d and reg_aladin write: the control-point grid (which
// includes the affine), the warped image and the affine as a text matrix.
// The dense displacement and deformation only when asked (--write; `gi
// transform` makes them later from the grid). register.json and profile.md
// split the run's wall time into its phases.
#include <filesystem>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>

#include "fitness/process/atomic_file.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/cli/registration_device.hpp"
#include "gi/register/grid_transform.hpp"
#include "gi/register/registration.hpp"
#include "gi/register/run_report.hpp"
#include "gi/register/volume.hpp"
#include "gi/register/wall_times.hpp"

namespace gi::cli {
namespace fs = std::filesystem;

namespace {

struct RegisterArgs {
  std::string reference, floating, rmask, out, similarity = "nmi", line_search = "bracketing", cpp, res;
  std::vector<std::string> write;
  KernelChoice choice;
  reg::RegistrationOptions options;
  bool progress = false, affine_only = false, rigid_only = false, no_affine = false;
  std::string aff;
};

// --affine-only, --rigid-only and --no-affine into the options; at most one.
void choose_stages(const RegisterArgs& a, reg::RegistrationOptions& options) {
  if (int(a.affine_only) + int(a.rigid_only) + int(a.no_affine) > 1)
    throw std::runtime_error("--affine-only, --rigid-only and --no-affine exclude each other");
  if (a.no_affine) options.affine.mode = reg::AffineMode::None;
  if (a.rigid_only) options.affine.mode = reg::AffineMode::Rigid;
  if (a.affine_only || a.rigid_only) options.bspline = false;
}

// The dense fields --write asks for: "displacement" or "deformation", each
// optionally "=FILE" (default OUT/<name>.nii.gz).
std::map<std::string, fs::path> dense_outputs(const std::vector<std::string>& items, const fs::path& out) {
  std::map<std::string, fs::path> files;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (name != "displacement" && name != "deformation")
      throw std::runtime_error("--write takes displacement and deformation (each optionally =FILE), not '" + item + "'");
    files[name] = eq == std::string::npos ? out / (name + ".nii.gz") : fs::path(item.substr(eq + 1));
  }
  return files;
}

// Runs every writer at once, one thread each (gzip is the slow part), and
// rethrows the first failure once all have finished.
void write_all(const std::vector<std::function<void()>>& writers) {
  std::vector<std::future<void>> pending;
  for (const auto& w : writers) pending.push_back(std::async(std::launch::async, w));
  std::exception_ptr first;
  for (auto& p : pending) {
    try {
      p.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void create_parent(const fs::path& file) {
  if (!file.parent_path().empty()) fs::create_directories(file.parent_path());
}

void run_register(const RegisterArgs& a) {
  reg::WallTimes wall(reg::process_age_seconds());
  reg::RegistrationOptions options = a.options;
  if (a.similarity == "ssd") options.similarity = reg::Similarity::Ssd;
  else if (a.similarity != "nmi") throw std::runtime_error("--similarity must be nmi or ssd, not '" + a.similarity + "'");
  if (a.line_search == "niftyreg") options.line_search = reg::LineSearch::NiftyReg;
  else if (a.line_search != "bracketing")
    throw std::runtime_error("--line-search must be bracketing or niftyreg, not '" + a.line_search + "'");
  choose_stages(a, options);
  const fs::path out(a.out);
  const std::map<std::string, fs::path> dense = dense_outputs(a.write, out);
  options.dense_displacement = !dense.empty();
  const fs::path cpp_file = a.cpp.empty() ? out / "control_points.nii.gz" : fs::path(a.cpp);
  const fs::path res_file = a.res.empty() ? out / "warped.nii.gz" : fs::path(a.res);
  const fs::path aff_file = a.aff.empty() ? out / "affine.txt" : fs::path(a.aff);

  // The images are read (and gunzipped) on their own threads while the
  // device starts and the kernels compile; each phase below is what the main
  // thread waited for.
  auto reference_read = std::async(std::launch::async, [&] { return reg::read_nifti(a.reference); });
  auto floating_read = std::async(std::launch::async, [&] { return reg::read_nifti(a.floating); });
  auto mask_read = std::async(std::launch::async, [&] { return a.rmask.empty() ? reg::Volume{} : reg::read_nifti(a.rmask); });
  RegistrationDevice rd = open_registration_device(a.choice);
  reg::ComputeDevice& device = *rd.device;
  wall.lap("start-up (device)");
  const reg::KernelSet kernels(reg::registration_kernel_names(options), rd.kernel_options);
  for (const auto& [name, k] : kernels.kernels()) device.prepare(k);
  wall.lap("compiling and loading kernels");
  const reg::Volume reference = reference_read.get();
  const reg::Volume floating = floating_read.get();
  const reg::Volume mask = mask_read.get();
  reg::check_registration_inputs(reference, floating, options, a.reference, a.floating);
  if (!a.rmask.empty()) reg::check_reference_mask(mask, reference, a.rmask, a.reference);
  wall.lap("reading images (the rest)");
  std::cout << "device: " << device.name() << "\n";
  for (const auto& [name, k] : kernels.kernels()) std::cout << "kernel " << name << ": " << k.origin << "\n";
  if (a.progress) options.progress = [](const std::string& line) { std::cout << line << std::endl; };

  const reg::RegistrationResult result =
      reg::register_images(reference, floating, kernels, device, options, a.rmask.empty() ? nullptr : &mask);
  wall.lap("registration");

  fs::create_directories(out);
  std::vector<std::function<void()>> writers = {
      [&] { reg::write_nifti(cpp_file, result.control_points, "gi register: control-point displacements, voxels"); },
      [&] { reg::write_nifti(res_file, result.warped, "gi register: warped floating image"); }};
  create_parent(cpp_file);
  create_parent(res_file);
  for (const auto& [name, file] : dense) {
    create_parent(file);
    if (name == "displacement")
      writers.push_back([&, f = file] { reg::write_nifti(f, result.displacement, "gi register: displacement, voxels"); });
    else
      writers.push_back([&, f = file] {
        reg::write_nifti(f, reg::world_deformation(result.displacement), "gi register: deformation, mm");
      });
  }
  if (options.affine.mode != reg::AffineMode::None) {
    create_parent(aff_file);
    writers.push_back([&] { fitness::write_file_atomically(aff_file, reg::matrix_text(result.affine.world_transform)); });
  }
  write_all(writers);
  wall.lap("writing images");

  nlohmann::json record = reg::run_record(result, options, kernels, device.name());
  record["reference"] = a.reference;
  record["floating"] = a.floating;
  if (!a.rmask.empty()) record["reference_mask"] = a.rmask;
  record["kernels_folder"] = a.choice.kernels;
  record["outputs"] = {{"control_points", cpp_file.string()}, {"warped", res_file.string()}};
  for (const auto& [name, file] : dense) record["outputs"][name] = file.string();
  if (options.affine.mode != reg::AffineMode::None) record["outputs"]["affine"] = aff_file.string();
  const reg::KernelSet::CompileStats& cs = kernels.compile_stats();
  record["compile"] = {{"cache_dir", rd.kernel_options.cache_dir ? rd.kernel_options.cache_dir->string() : ""},
                       {"cache_hits", cs.cache_hits},
                       {"nvrtc_compiles", cs.compiles},
                       {"nvrtc_seconds_summed", cs.compile_seconds}};
  // What the split leaves out: writing these two records and the process's exit.
  record["wall_seconds"] = wall.json();
  fitness::write_file_atomically(out / "register.json", record.dump(2) + "\n");
  const std::string table = "## Wall time\n\n" + wall.table() + "\n## Kernels\n\n" + reg::profile_table(result);
  fitness::write_file_atomically(out / "profile.md", table);
  std::cout << table << "registered in " << result.seconds << " s, " << wall.total() << " s in all; results in "
            << out.string() << "\n";
}

}  // namespace

void add_register(CLI::App& app) {
  auto* cmd = app.add_subcommand("register", "B-spline free-form registration of two images with the library's "
                                             "kernels (seeds or evolved), NiftyReg f3d style");
  auto a = std::make_shared<RegisterArgs>();
  cmd->add_option("--reference", a->reference, "reference image (.nii or .nii.gz)")->required();
  cmd->add_option("--floating", a->floating, "floating image, on any grid (resampled through world coordinates)")->required();
  cmd->add_option("--rmask", a->rmask, "reference mask, on the reference's grid: the similarity and the affine "
                                       "stage's blocks use only its nonzero voxels");
  cmd->add_option("--out", a->out, "folder for the results: register.json, profile.md and, unless named elsewhere, "
                                   "the images")->required();
  cmd->add_option("--cpp", a->cpp, "the control-point grid's file (default OUT/control_points.nii.gz; a .nii name: "
                                   "uncompressed)");
  cmd->add_option("--res", a->res,
                  "the warped floating image's file (default OUT/warped.nii.gz; a .nii name: uncompressed)");
  cmd->add_option("--write", a->write,
                  "dense fields to write too, comma-separated: displacement (voxels), deformation (world mm), each "
                  "optionally =FILE (default OUT/<name>.nii.gz); `gi transform` makes them later from the grid")
      ->delimiter(',');
  cmd->add_option("--aff", a->aff, "the affine's text file: the reference-world to floating-world matrix, as reg_aladin "
                                   "writes it (default OUT/affine.txt)");
  cmd->add_flag("--affine-only", a->affine_only, "the affine pre-alignment alone, no B-spline stage");
  cmd->add_flag("--rigid-only", a->rigid_only, "a rigid pre-alignment alone, no B-spline stage");
  cmd->add_flag("--no-affine", a->no_affine, "no affine pre-alignment: the B-spline stage starts from the identity");
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
  cmd->add_flag("--progress", a->progress, "print one line per iteration: level, iteration, objective, time");
  add_kernel_choice_options(cmd, a->choice);
  cmd->callback([a] { run_register(*a); });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("register", gi::cli::add_register)
