// The data around `gi register`, no GPU needed:
//   `gi make-pair --out DIR ...`: a test pair with a known deformation made
//     from a real brain MRI (gi/register/test_pair.hpp); `--affine` adds a
//     known affine and puts the floating image on its own grid;
//   `gi accuracy --displacement D --truth T --mask M ...`: how close an
//     estimated displacement is to the truth, whether it folds, and how far it
//     is from another estimate (gi/register/accuracy.hpp).
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "fitness/process/atomic_file.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/register/accuracy.hpp"
#include "gi/register/test_pair.hpp"
#include "gi/register/volume.hpp"

namespace gi::cli {
namespace {
namespace fs = std::filesystem;

// Colin27 (ch2) and its brain-extracted copy, from Debian's mricron-data.
constexpr const char* kColinHead = "/usr/share/mricron/templates/ch2.nii.gz";
constexpr const char* kColinBrain = "/usr/share/mricron/templates/ch2bet.nii.gz";

std::string fixed(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string summary_line(const reg::Summary& s) {
  return "mean " + fixed(s.mean) + "  median " + fixed(s.median) + "  p95 " + fixed(s.p95) + "  p99 " + fixed(s.p99) +
         "  max " + fixed(s.max);
}

std::string triple(const std::array<double, 3>& v, int decimals) {
  return "(" + fixed(v[0], decimals) + ", " + fixed(v[1], decimals) + ", " + fixed(v[2], decimals) + ")";
}

void print_affine(const reg::TestPair& pair) {
  const reg::PairAffine& af = pair.affine;
  const auto& t = af.translation;
  const auto& f = pair.floating;
  std::cout << "affine (truth_affine.txt): rotation " << fixed(af.rotation_degrees, 2) << " deg about "
            << triple(af.axis, 3) << ", translation " << triple(t, 2) << " mm (length "
            << fixed(std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]), 2) << "), scaling " << triple(af.scaling, 4)
            << "\nfloating grid: " << f.dim[0] << "x" << f.dim[1] << "x" << f.dim[2] << " voxels of "
            << fixed(f.spacing[0], 2) << " mm\n";
}

}  // namespace

void add_make_pair(CLI::App& app) {
  auto* cmd = app.add_subcommand("make-pair",
                                 "Make a registration test pair with a known smooth deformation from a brain MRI "
                                 "(reference, floating, truth displacement, brain mask, pair.json)");
  struct Args {
    std::string out, image = kColinHead, brain = kColinBrain;
    reg::PairOptions options;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--out", a->out, "folder to write the pair into (created if missing)")->required();
  cmd->add_option("--image", a->image, "the source image (NIfTI)")->capture_default_str();
  cmd->add_option("--brain", a->brain, "its brain-extracted copy (> 0 inside the brain), same grid")
      ->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "random seed: the same seed gives the same pair")->capture_default_str();
  cmd->add_option("--max-displacement", a->options.max_displacement,
                  "largest truth displacement inside the brain, voxels")
      ->capture_default_str();
  cmd->add_option("--sigma", a->options.sigma, "Gaussian smoothing of the per-voxel random field, voxels")
      ->capture_default_str();
  cmd->add_option("--low-frequency", a->options.low_frequency,
                  "weight of a second, broader random field added to the truth (0: none)")
      ->capture_default_str();
  cmd->add_option("--low-frequency-sigma", a->options.low_frequency_sigma, "its smoothing, voxels")
      ->capture_default_str();
  cmd->add_option("--noise", a->options.noise, "noise sigma, a fraction of the brain's intensity range")
      ->capture_default_str();
  cmd->add_option("--bias", a->options.bias, "largest |log| of the reference's smooth multiplicative bias field")
      ->capture_default_str();
  auto* affine = cmd->add_flag("--affine", a->options.affine,
                               "also move the floating image by a random affine (reference world -> floating world, "
                               "written as truth_affine.txt) onto its own grid; the truth includes the affine");
  cmd->add_option("--affine-rotation", a->options.affine_rotation,
                  "with --affine: largest rotation angle, degrees (about a random axis)")
      ->capture_default_str()
      ->needs(affine);
  cmd->add_option("--affine-translation", a->options.affine_translation,
                  "with --affine: largest length of the brain centre's translation, mm")
      ->capture_default_str()
      ->needs(affine);
  cmd->add_option("--affine-scaling", a->options.affine_scaling,
                  "with --affine: largest |scale - 1| along each world axis")
      ->capture_default_str()
      ->needs(affine);
  cmd->add_option("--floating-voxel", a->options.floating_voxel, "with --affine: the floating grid's voxel size, mm")
      ->capture_default_str()
      ->needs(affine);
  cmd->callback([a] {
    const auto start = std::chrono::steady_clock::now();
    const reg::Volume image = reg::read_nifti(a->image, 1);
    const reg::Volume brain = reg::read_nifti(a->brain, 1);
    reg::require_same_grid(image, a->image, brain, a->brain);
    const reg::TestPair pair = reg::make_test_pair(image, brain, a->options);
    reg::write_test_pair(a->out, pair, a->options, a->image, a->brain);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& s = pair.stats;
    std::cout << "wrote " << a->out << " (seed " << a->options.seed << ", " << fixed(seconds, 1) << " s)\n"
              << "truth |u| in the brain (" << s.brain_voxels << " voxels): mean " << fixed(s.mean_displacement)
              << "  p95 " << fixed(s.p95_displacement) << "  max " << fixed(s.max_displacement) << " voxels\n"
              << "min det(I + grad u): " << fixed(s.min_jacobian, 4) << " (brain " << fixed(s.min_jacobian_in_brain, 4)
              << ")\n";
    if (a->options.affine) print_affine(pair);
  });
}

void add_accuracy(CLI::App& app) {
  auto* cmd = app.add_subcommand("accuracy", "Score an estimated displacement field against a test pair's truth: "
                                             "error percentiles and folding inside the brain mask");
  struct Args {
    std::string displacement, truth, mask, compare, json;
    bool elastix = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--displacement", a->displacement,
                  "estimated displacement (3 components, voxels of the reference grid; reference voxel x maps to "
                  "floating x + u(x))")
      ->required();
  cmd->add_option("--truth", a->truth, "the pair's truth_displacement.nii.gz")->required();
  cmd->add_option("--mask", a->mask, "the pair's brain_mask.nii.gz")->required();
  cmd->add_flag("--elastix-lps-mm", a->elastix,
                "--displacement is transformix's deformationField (ITK LPS millimetres): convert it to voxels on "
                "the truth's grid");
  cmd->add_option("--compare", a->compare,
                  "another estimate (voxel units, e.g. the evolved kernels' run): p50/p99/max of the difference "
                  "inside the mask");
  cmd->add_option("--json", a->json, "also write every number as JSON here");
  cmd->callback([a] {
    reg::Volume estimated = reg::read_nifti(a->displacement, 3);
    const reg::Volume truth = reg::read_nifti(a->truth, 3);
    const reg::Volume mask = reg::read_nifti(a->mask, 1);
    reg::require_same_grid(truth, a->truth, estimated, a->displacement);
    reg::require_same_grid(truth, a->truth, mask, a->mask);
    // The truth was written with the reference's geometry, so its voxel_to_world is the reference's.
    if (a->elastix) estimated = reg::elastix_lps_mm_to_voxels(estimated, truth.voxel_to_world);
    const reg::AccuracyReport r = reg::measure_accuracy(estimated, truth, mask);
    nlohmann::json out = {{"displacement", a->displacement},
                          {"truth", a->truth},
                          {"mask", a->mask},
                          {"elastix_lps_mm", a->elastix},
                          {"accuracy", reg::to_json(r)}};
    std::cout << "inside the mask (" << r.mask_voxels << " of " << r.voxels << " voxels), voxels:\n"
              << "  error |estimated - truth|  " << summary_line(r.error) << "\n"
              << "  error in mm                " << summary_line(r.error_mm) << "\n"
              << "  truth |u|                  " << summary_line(r.truth_length) << "\n"
              << "  estimated |u|              " << summary_line(r.estimated_length) << "\n"
              << "folding det(I + grad u) <= 0: in mask " << r.folded_in_mask << " ("
              << fixed(100 * r.folded_fraction_in_mask, 4) << "%), whole image " << r.folded << " ("
              << fixed(100 * r.folded_fraction, 4) << "%); min det " << fixed(r.min_jacobian_in_mask, 4)
              << " in mask, " << fixed(r.min_jacobian, 4) << " overall\n";
    if (!a->compare.empty()) {
      const reg::Volume other = reg::read_nifti(a->compare, 3);
      reg::require_same_grid(truth, a->truth, other, a->compare);
      const reg::FieldComparison c = reg::compare_fields(estimated, other, mask);
      out["compare"] = reg::to_json(c);
      out["compare"]["other"] = a->compare;
      std::cout << "|displacement - compare| in mask: p50 " << fixed(c.p50, 5) << "  p99 " << fixed(c.p99, 5)
                << "  max " << fixed(c.max, 5) << "  mean " << fixed(c.mean, 5) << "\n";
    }
    if (!a->json.empty()) fitness::write_file_atomically(a->json, out.dump(2) + "\n");
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("make-pair", gi::cli::add_make_pair)
GI_REGISTER_COMMAND("accuracy", gi::cli::add_accuracy)
