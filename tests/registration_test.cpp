// gi register's pipeline (gi/register/registration.hpp) on small synthetic
// images with a known smooth deformation: its host logic end to end with the
// library kernels run by the CPU emulator, and (where a GPU is present) the
// same on the GPU. Also the kernel set's choice between seed and evolved
// kernels and the launch checks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "gi/register/accuracy.hpp"
#include "gi/register/compute_device.hpp"
#include "gi/register/emulated_device.hpp"
#include "gi/register/gpu_device.hpp"
#include "gi/register/grid_transform.hpp"
#include "gi/register/kernel_set.hpp"
#include "gi/register/registration.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "tests/test_support.hpp"

namespace gi::reg {
namespace {
namespace fs = std::filesystem;

const fs::path kSeeds = test::source_dir() / "seeds";

// A smooth image with structure everywhere (so the deformation is observable
// at every voxel): a sum of plane waves of 6 to 12 voxels' wavelength.
double phantom(double x, double y, double z, int n) {
  (void)n;
  const double waves[5][5] = {{0.9, 0.3, 0.1, 0.0, 1.0}, {0.2, 0.8, 0.4, 1.3, 0.8}, {0.1, 0.35, 0.95, 2.1, 0.9},
                              {0.6, -0.5, 0.45, 0.7, 0.6}, {-0.4, 0.7, -0.6, 2.9, 0.5}};
  double v = 0;
  for (const auto& w : waves) v += w[4] * std::sin(0.8 * (w[0] * x + w[1] * y + w[2] * z) + w[3]);
  return v;
}

// The known displacement: a smooth field of about `amplitude` voxels.
std::array<double, 3> truth_at(double x, double y, double z, int n, double amplitude) {
  const double k = 2 * M_PI / n;
  return {amplitude * std::sin(k * y + 0.3) * std::cos(k * z), amplitude * std::sin(k * z + 1.0) * std::cos(k * x),
          amplitude * std::sin(k * x + 2.0) * std::cos(k * y)};
}

struct SyntheticPair {
  Volume reference, floating, truth, mask;
};

// reference(x) = floating(x + u(x)), both sampled from the analytic phantom.
SyntheticPair synthetic_pair(int n, double amplitude) {
  SyntheticPair p;
  for (Volume* v : {&p.reference, &p.floating, &p.mask}) {
    v->dim = {n, n, n};
    v->data.assign(v->voxels(), 0.f);
  }
  p.truth.dim = {n, n, n};
  p.truth.components = 3;
  p.truth.data.assign(3 * p.truth.voxels(), 0.f);
  const std::size_t voxels = p.truth.voxels();
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const std::size_t i = p.reference.index(x, y, z);
        const auto u = truth_at(x, y, z, n, amplitude);
        p.floating.data[i] = static_cast<float>(phantom(x, y, z, n));
        p.reference.data[i] = static_cast<float>(phantom(x + u[0], y + u[1], z + u[2], n));
        for (int c = 0; c < 3; ++c) p.truth.data[c * voxels + i] = static_cast<float>(u[c]);
        // Accuracy is judged away from the border, where the image has content.
        const int margin = n / 6;
        p.mask.data[i] = (x >= margin && y >= margin && z >= margin && x < n - margin && y < n - margin && z < n - margin)
                             ? 1.f : 0.f;
      }
  return p;
}

RegistrationOptions small_options() {
  RegistrationOptions o;
  o.levels = 2;
  o.spacing = 5;
  o.bins = 32;
  o.max_iterations = 15;
  o.affine.mode = AffineMode::None;  // these test the B-spline stage (tests/affine_stage_test.cpp the affine one)
  return o;
}

TEST(Registration, RecoversAKnownDeformationWithTheEmulatedKernels) {
  const SyntheticPair p = synthetic_pair(24, 1.5);
  RegistrationOptions options = small_options();
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  std::vector<std::string> lines;
  options.progress = [&](const std::string& line) { lines.push_back(line); };
  const RegistrationResult r = register_images(p.reference, p.floating, kernels, device, options);

  const AccuracyReport before = measure_accuracy(Volume{p.truth.dim, 3, {1, 1, 1}, {}, std::vector<float>(p.truth.data.size(), 0.f)},
                                                 p.truth, p.mask);
  const AccuracyReport after = measure_accuracy(r.displacement, p.truth, p.mask);
  EXPECT_GT(before.error.mean, 1.0);
  // The registration must recover most of the deformation and not fold.
  // Measured: 1.06 voxels before, 0.105 after (p95 0.21) with 15 iterations per level.
  EXPECT_LT(after.error.mean, 0.15 * before.error.mean) << "mean error " << after.error.mean;
  EXPECT_LT(after.error.p95, 0.35) << "p95 error";
  EXPECT_EQ(after.folded, 0u);
  ASSERT_EQ(r.levels.size(), 2u);
  for (const LevelReport& l : r.levels) {
    EXPECT_GT(l.iterations, 0);
    EXPECT_GE(l.objective_end, l.objective_start);
  }
  EXPECT_EQ(r.levels[0].level, 1);  // coarsest first
  EXPECT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("iteration 1:"), std::string::npos) << lines.front();
  // Every kernel the run needs was launched and timed.
  for (const char* k : {"bspline/deformation_field", "similarity/nmi_joint_histogram", "bspline/refine_grid",
                        "tools/voxel_to_node_gradient", "optimiser/cg_direction_update"})
    EXPECT_GT(r.kernel_times.count(k) ? r.kernel_times.at(k).launches : 0u, 0u) << k;
  // The warped image is the floating image through the estimate: closer to
  // the reference than the floating image is.
  double before_ssd = 0, after_ssd = 0;
  for (std::size_t i = 0; i < p.reference.voxels(); ++i) {
    if (p.mask.data[i] == 0) continue;
    before_ssd += std::pow(p.reference.data[i] - p.floating.data[i], 2);
    after_ssd += std::pow(p.reference.data[i] - r.warped.data[i], 2);
  }
  EXPECT_LT(after_ssd, 0.3 * before_ssd);
}

TEST(Registration, RefusesImagesItCannotRegister) {
  SyntheticPair p = synthetic_pair(24, 1.0);
  RegistrationOptions options = small_options();
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  Volume other = p.floating;
  other.dim = {24, 24, 12};
  other.data.resize(other.voxels());
  options.levels = 3;  // the floating image: 12 -> 6 -> 3 voxels along z
  try {
    register_images(p.reference, other, kernels, device, options);
    FAIL() << "a floating image too small for the pyramid was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the floating image (24x24x12) is too small for 3 pyramid levels"), std::string::npos)
        << e.what();
  }
  options.levels = 4;  // 24 -> 12 -> 6 -> 3 voxels
  try {
    register_images(p.reference, p.floating, kernels, device, options);
    FAIL() << "a pyramid coarser than 4 voxels was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("too small for 4 pyramid levels"), std::string::npos) << e.what();
  }
  p.floating.data.assign(p.floating.voxels(), 3.f);
  options.levels = 2;
  try {
    register_images(p.reference, p.floating, kernels, device, options);
    FAIL() << "a constant image was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("floating image is constant"), std::string::npos) << e.what();
  }
}

// A mask of every voxel is no mask: the same launches on the same voxels.
TEST(Registration, AMaskOfEveryVoxelChangesNothing) {
  const SyntheticPair p = synthetic_pair(16, 1.0);
  RegistrationOptions options = small_options();
  options.max_iterations = 4;
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  Volume whole = p.reference;
  whole.data.assign(whole.voxels(), 1.f);
  const RegistrationResult plain = register_images(p.reference, p.floating, kernels, device, options);
  const RegistrationResult masked = register_images(p.reference, p.floating, kernels, device, options, &whole);
  EXPECT_EQ(masked.displacement.data, plain.displacement.data);
}

// What lies outside the mask does not pull the result: the reference's
// bottom slab is replaced by the phantom shifted 3 voxels, which contradicts
// the deformation; with the slab masked out the rest is registered as well
// as if the slab were right.
TEST(Registration, WhatLiesOutsideTheMaskDoesNotPullTheResult) {
  constexpr int n = 24, slab = 7;
  const SyntheticPair clean = synthetic_pair(n, 1.5);
  SyntheticPair p = clean;
  Volume mask = p.reference, judged = p.mask;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const std::size_t i = p.reference.index(x, y, z);
        if (z < slab) p.reference.data[i] = static_cast<float>(phantom(x + 3, y - 2, z, n));
        mask.data[i] = z < slab ? 0.f : 1.f;
        if (z < slab + 2) judged.data[i] = 0.f;  // judged where the mask is and the truth is observable
      }
  RegistrationOptions options = small_options();
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const double reference_error =
      measure_accuracy(register_images(clean.reference, clean.floating, kernels, device, options).displacement,
                       p.truth, judged).error.mean;
  const double pulled_error =
      measure_accuracy(register_images(p.reference, p.floating, kernels, device, options).displacement, p.truth,
                       judged).error.mean;
  const double masked_error =
      measure_accuracy(register_images(p.reference, p.floating, kernels, device, options, &mask).displacement,
                       p.truth, judged).error.mean;
  std::cout << "mean error where judged: clean " << reference_error << ", corrupted slab " << pulled_error
            << ", corrupted slab masked out " << masked_error << "\n";
  EXPECT_GT(pulled_error, 1.3 * reference_error) << "the corrupted slab should pull an unmasked registration";
  EXPECT_LT(masked_error, 0.8 * pulled_error);
  EXPECT_LT(masked_error, 1.25 * reference_error);  // measured: 0.078 clean, 0.173 pulled, 0.090 masked
}

TEST(Registration, LaunchesAreCheckedAgainstTheSpec) {
  const KernelSet kernels({"tools/sum_reduction"}, {kSeeds, std::nullopt, std::nullopt, ""});
  const RegistrationKernel& k = kernels.get("tools/sum_reduction");
  EmulatedDevice device;
  Buffer values(device, 16), sum(device, 4);
  KernelArgs args;
  args.buffers["values"] = values.array();
  args.variables["valueNumber"] = 4;
  try {
    resolve_launch(k, args);
    FAIL() << "no array for 'sum' was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no array given for parameter 'sum'"), std::string::npos) << e.what();
  }
  args.buffers["sum"] = sum.array();
  args.variables["valueNumber"] = 8;  // 32 bytes needed, 16 given
  try {
    resolve_launch(k, args);
    FAIL() << "an array smaller than the spec's count was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("holds 16 bytes, the spec's count needs 32"), std::string::npos) << e.what();
  }
  args.variables["valueNumber"] = 4;
  values.upload(std::vector<float>{1, 2, 3, 4.5f});
  sum.zero();
  device.launch(k, args);
  EXPECT_EQ(sum.download<float>()[0], 10.5f);
}

// A copy of one published evolved folder in a temporary evolved/<gpu>.
struct EvolvedCopy {
  fs::path dir = fs::temp_directory_path() / ("gi-register-evolved-" + std::to_string(::getpid()));
  EvolvedCopy() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(test::source_dir() / "evolved" / "nvidia-h200" / "tools-sum_reduction", dir / "tools-sum_reduction");
  }
  ~EvolvedCopy() { fs::remove_all(dir); }
};

TEST(Registration, KernelSetTakesEvolvedKernelsWhereTheyArePublished) {
  EvolvedCopy evolved;
  const KernelSet set({"tools/sum_reduction", "tools/max_vector_length"}, {kSeeds, evolved.dir, std::nullopt, ""});
  const RegistrationKernel& sum = set.get("tools/sum_reduction");
  EXPECT_TRUE(sum.evolved);
  EXPECT_NE(sum.origin.find("evolved"), std::string::npos);
  EXPECT_NE(sum.launch.switches.at("SUM_PATH"), "0");  // the published kernel takes another path
  const RegistrationKernel& len = set.get("tools/max_vector_length");
  EXPECT_FALSE(len.evolved);
  EXPECT_NE(len.origin.find("no evolved kernel"), std::string::npos) << len.origin;
  // The evolved sum gives the seed's answer in the emulator.
  EmulatedDevice device;
  Buffer values(device, 4 * 1000), total(device, 4);
  std::vector<float> v(1000);
  for (int i = 0; i < 1000; ++i) v[i] = static_cast<float>(i % 7);
  values.upload(v);
  total.zero();
  KernelArgs args{{{"values", values.array()}, {"sum", total.array()}}, {{"valueNumber", 1000}}};
  device.launch(sum, args);
  EXPECT_EQ(total.download<float>()[0], 2997.f);  // 142 runs of 0..6 (21 each) and 0..5
}

TEST(Registration, KernelSetRefusesAnEvolvedFolderOutOfStepWithItsPatch) {
  EvolvedCopy evolved;
  {
    std::ofstream f(evolved.dir / "tools-sum_reduction" / "kernel.cu", std::ios::app);
    f << "// edited by hand\n";
  }
  try {
    KernelSet({"tools/sum_reduction"}, {kSeeds, evolved.dir, std::nullopt, ""});
    FAIL() << "a kernel.cu that is not its patch applied was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not patch.gi applied to the seed"), std::string::npos) << e.what();
  }
  try {
    KernelSet({"tools/sum_reduction"}, {kSeeds, evolved.dir / "missing", std::nullopt, ""});
    FAIL() << "a missing evolved folder was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a folder of evolved kernels"), std::string::npos) << e.what();
  }
}

// On a GPU: a 64^3 pair, three levels, the seeds compiled by NVRTC.
TEST(RegistrationGpu, RecoversAKnownDeformation) {
  const fitness::CudaEnvironment cuda = fitness::probe_cuda();
  if (!cuda.driver_ok || cuda.gpus.empty()) GTEST_SKIP() << "no GPU: " << cuda.message;
  const SyntheticPair p = synthetic_pair(64, 2.5);
  RegistrationOptions options;
  options.bins = 32;
  options.affine.mode = AffineMode::None;
  GpuDevice device(0);
  const KernelSet kernels(registration_kernel_names(options), {kSeeds, std::nullopt, std::nullopt, device.arch()});
  const RegistrationResult r = register_images(p.reference, p.floating, kernels, device, options);
  const AccuracyReport a = measure_accuracy(r.displacement, p.truth, p.mask);
  EXPECT_GT(a.truth_length.mean, 1.5);
  EXPECT_LT(a.error.mean, 0.25 * a.truth_length.mean) << "mean error " << a.error.mean;
  EXPECT_EQ(a.folded, 0u);
}

}  // namespace
}  // namespace gi::reg

namespace gi::reg {
namespace {

// `gi register` as a user runs it, on NIfTI files, with the emulated kernels.
TEST(RegisterCommand, WritesTheResultsAndNamesEveryKernelsOrigin) {
  const fs::path dir = fs::temp_directory_path() / ("gi-register-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const SyntheticPair p = synthetic_pair(16, 1.0);
  write_nifti(dir / "reference.nii.gz", p.reference);
  write_nifti(dir / "floating.nii.gz", p.floating);
  Volume whole = p.reference;
  whole.data.assign(whole.voxels(), 1.f);
  write_nifti(dir / "mask.nii.gz", whole);
  // Named .nii files are written uncompressed; a dense field only when --write asks.
  const fs::path cpp = dir / "grid" / "cpp.nii";
  const test::CommandOutput r = test::run_gi(
      "register --emulate --seeds " + kSeeds.string() + " --reference " + (dir / "reference.nii.gz").string() +
      " --floating " + (dir / "floating.nii.gz").string() + " --rmask " + (dir / "mask.nii.gz").string() +
      " --out " + (dir / "out").string() + " --cpp " +
      cpp.string() + " --write displacement --no-affine --levels 2 --bins 16 --max-iterations 2 --progress");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kernel bspline/refine_grid: seed "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("level 2 [16x16x16, grid 7x7x7] iteration 1:"), std::string::npos) << r.output;
  const Volume displacement = read_nifti(dir / "out" / "displacement.nii.gz", 3);
  EXPECT_EQ(displacement.dim, p.reference.dim);
  const Volume warped = read_nifti(dir / "out" / "warped.nii.gz");
  EXPECT_EQ(warped.dim, p.reference.dim);
  EXPECT_EQ(read_nifti(cpp, 3).dim, (std::array<int, 3>{7, 7, 7}));
  EXPECT_EQ(fs::file_size(cpp), 352u + 3 * 7 * 7 * 7 * 4) << "a .nii is written uncompressed";
  EXPECT_FALSE(fs::exists(dir / "out" / "deformation.nii.gz")) << "not asked for";
  EXPECT_FALSE(fs::exists(dir / "out" / "control_points.nii.gz")) << "named elsewhere";
  const nlohmann::json record = nlohmann::json::parse(std::ifstream(dir / "out" / "register.json"));
  RegistrationOptions no_affine;
  no_affine.affine.mode = AffineMode::None;
  EXPECT_EQ(record["kernels"].size(), registration_kernel_names(no_affine).size());
  EXPECT_EQ(record["kernels"].count("blockmatching/ncc_block_matching"), 0u) << "no affine stage: not compiled";
  EXPECT_EQ(record["levels"].size(), 2u);
  EXPECT_EQ(record["outputs"]["control_points"], cpp.string());
  EXPECT_EQ(record["reference_mask"], (dir / "mask.nii.gz").string());
  EXPECT_EQ(record["affine"]["mode"], "none");
  EXPECT_FALSE(fs::exists(dir / "out" / "affine.txt"));
  // The wall time is split into phases that add up to the total.
  double phases = 0;
  for (const auto& [phase, seconds] : record["wall_seconds"].items())
    if (phase != "total") phases += seconds.get<double>();
  EXPECT_NEAR(phases, record["wall_seconds"]["total"].get<double>(), 1e-9);
  EXPECT_GT(record["wall_seconds"]["registration"].get<double>(), 0);
  EXPECT_TRUE(record["wall_seconds"].contains("writing images"));
  EXPECT_TRUE(fs::exists(dir / "out" / "profile.md"));

  // gi transform makes the same fields from the written grid, with the same kernels.
  const test::CommandOutput t = test::run_gi(
      "transform --emulate --seeds " + kSeeds.string() + " --reference " + (dir / "reference.nii.gz").string() +
      " --cpp " + cpp.string() + " --displacement " + (dir / "d.nii.gz").string() + " --deformation " +
      (dir / "w.nii").string() + " --floating " + (dir / "floating.nii.gz").string() + " --res " +
      (dir / "r.nii").string());
  ASSERT_EQ(t.exit_code, 0) << t.output;
  EXPECT_EQ(read_nifti(dir / "d.nii.gz", 3).data, displacement.data);
  EXPECT_EQ(read_nifti(dir / "r.nii").data, warped.data);
  // The world deformation is the voxel position plus the displacement, through voxel_to_world (identity here).
  const Volume world = read_nifti(dir / "w.nii", 3);
  const std::size_t i = displacement.index(5, 6, 7), n = displacement.voxels();
  EXPECT_NEAR(world.data[i], 5 + displacement.data[i], 1e-4);
  EXPECT_NEAR(world.data[2 * n + i], 7 + displacement.data[2 * n + i], 1e-4);
  // A grid that does not fit the reference is refused, naming both files.
  Volume small = p.reference;
  small.dim = {16, 16, 8};
  small.data.resize(small.voxels());
  write_nifti(dir / "small.nii.gz", small);
  const test::CommandOutput misfit = test::run_gi("transform --emulate --seeds " + kSeeds.string() + " --reference " +
                                                  (dir / "small.nii.gz").string() + " --cpp " + cpp.string() +
                                                  " --displacement " + (dir / "x.nii").string());
  EXPECT_EQ(misfit.exit_code, 1);
  EXPECT_NE(misfit.output.find("cpp.nii: holds 7x7x7 nodes; a spacing of 5 voxels on this reference needs 7x7x5"),
            std::string::npos)
      << misfit.output;
  EXPECT_NE(misfit.output.find("small.nii.gz"), std::string::npos) << misfit.output;
  const test::CommandOutput bad_write = test::run_gi(
      "register --emulate --seeds " + kSeeds.string() + " --reference " + (dir / "reference.nii.gz").string() +
      " --floating " + (dir / "floating.nii.gz").string() + " --out " + (dir / "bad").string() + " --write jacobian");
  EXPECT_EQ(bad_write.exit_code, 1);
  EXPECT_NE(bad_write.output.find("--write takes displacement and deformation"), std::string::npos) << bad_write.output;
  const test::CommandOutput both = test::run_gi(
      "register --emulate --seeds " + kSeeds.string() + " --reference " + (dir / "reference.nii.gz").string() +
      " --floating " + (dir / "floating.nii.gz").string() + " --out " + (dir / "bad").string() +
      " --rigid-only --no-affine");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.output.find("exclude each other"), std::string::npos) << both.output;
  // A floating image on another grid is registered through world
  // coordinates (tests/affine_stage_test.cpp), but it must hold the pyramid.
  Volume other = small;
  write_nifti(dir / "other.nii.gz", other);
  const test::CommandOutput bad = test::run_gi("register --emulate --seeds " + kSeeds.string() + " --reference " +
                                               (dir / "reference.nii.gz").string() + " --floating " +
                                               (dir / "other.nii.gz").string() + " --out " + (dir / "bad").string());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("other.nii.gz (16x16x8) is too small for 3 pyramid levels"), std::string::npos) << bad.output;
  // A mask on another grid than the reference's is refused, naming both files.
  const test::CommandOutput bad_mask = test::run_gi(
      "register --emulate --seeds " + kSeeds.string() + " --reference " + (dir / "reference.nii.gz").string() +
      " --floating " + (dir / "floating.nii.gz").string() + " --rmask " + (dir / "small.nii.gz").string() +
      " --out " + (dir / "bad").string());
  EXPECT_EQ(bad_mask.exit_code, 1);
  EXPECT_NE(bad_mask.output.find((dir / "small.nii.gz").string() + ": the mask (16x16x8 voxels) is not on the voxel grid of " +
                                 (dir / "reference.nii.gz").string() + " (16x16x16)"),
            std::string::npos)
      << bad_mask.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gi::reg

namespace gi::reg {
namespace {

// A write the disk cuts short (here a file size limit) is an error naming
// the file, and leaves nothing under its name.
TEST(TransformCommand, ReportsAWriteCutShort) {
  const fs::path dir = fs::temp_directory_path() / ("gi-transform-short-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const SyntheticPair p = synthetic_pair(48, 1.0);
  write_nifti(dir / "reference.nii.gz", p.reference);
  const std::array<int, 3> grid = grid_dim_for(p.reference.dim, 5);
  write_nifti(dir / "cpp.nii.gz", control_point_volume(std::vector<float>(4 * product(grid), 0.f), grid, p.reference,
                                                       p.reference.voxel_to_world, 5));
  // 1 MiB at most per file (ulimit -f counts 1024-byte blocks in bash, 512 in dash;
  // the emulator's own files are smaller): the 1.3 MB displacement cannot be
  // written. The signal is ignored, so write() fails instead of killing gi.
  const test::CommandOutput r = test::run_command(
      "trap '' XFSZ; ulimit -f 1024 && \"" + test::gi_binary() + "\" transform --emulate --seeds " + kSeeds.string() +
      " --reference " + (dir / "reference.nii.gz").string() + " --cpp " + (dir / "cpp.nii.gz").string() +
      " --displacement " + (dir / "d.nii").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find((dir / "d.nii").string() + ": writing"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("failed (disk full or not writable?)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "d.nii"));
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find(".gi-tmp"), std::string::npos) << entry.path();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gi::reg
