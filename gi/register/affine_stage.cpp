#include "gi/register/affine_stage.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "gi/register/grid_transform.hpp"
#include "gi/register/subvoxel_match.hpp"

namespace gi::reg {

namespace {

constexpr int kBlock = 4;              // voxels per block side, as the kernel's
constexpr int kMinimumBlockVoxels = 32;  // a block cut by the border needs half its voxels
constexpr float kNoMatch = -2.f;        // the kernel's marker for a block without a match
constexpr std::size_t kMinimumMatches = 8;  // fewer make a fit of 12 parameters from too little

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Level voxel -> finest voxel: a voxel of level l is voxel 2^l of level 0.
Matrix4 level_scale(int level) {
  Matrix4 s = identity4();
  for (int a = 0; a < 3; ++a) s[a][a] = std::ldexp(1.0, level);
  return s;
}

// `m` (finest voxels) as a transform of level `level`'s voxels.
Matrix4 at_level(const Matrix4& m, int level) {
  return multiply(inverse(level_scale(level)), multiply(m, level_scale(level)));
}

std::vector<float> rows12(const Matrix4& m) {
  std::vector<float> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) r.push_back(static_cast<float>(m[i][j]));
  return r;
}

std::array<int, 3> block_dim(std::array<int, 3> dim) {
  return {(dim[0] + kBlock - 1) / kBlock, (dim[1] + kBlock - 1) / kBlock, (dim[2] + kBlock - 1) / kBlock};
}

// The first voxel of block `b` (blocks numbered x fastest).
std::array<int, 3> block_origin(std::size_t b, std::array<int, 3> blocks) {
  return {static_cast<int>(b % blocks[0]) * kBlock, static_cast<int>((b / blocks[0]) % blocks[1]) * kBlock,
          static_cast<int>(b / (std::size_t(blocks[0]) * blocks[1])) * kBlock};
}

// Calls `work(i)` for i in [0, count), spread over the cores (up to 16
// threads, each taking every threads-th i).
template <class Work>
void for_each_on_threads(std::size_t count, Work work) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (std::size_t i = t; i < count; i += threads) work(i);
    });
  for (std::thread& w : workers) w.join();
}

// Calls `visit(i)` with the image index of every voxel of the block at
// `origin` that lies inside the image (a border block has fewer).
template <class Visit>
void for_each_block_voxel(std::array<int, 3> origin, std::array<int, 3> dim, Visit visit) {
  for (int z = origin[2]; z < std::min(dim[2], origin[2] + kBlock); ++z)
    for (int y = origin[1]; y < std::min(dim[1], origin[1] + kBlock); ++y)
      for (int x = origin[0]; x < std::min(dim[0], origin[0] + kBlock); ++x)
        visit((std::size_t(z) * dim[1] + y) * dim[0] + x);
}

// The mask of the blocks that take part: the `share` of blocks with the
// highest intensity variance among those with any (a flat block has no
// match to find) and, given a reference mask, wholly inside it. One int per
// voxel, as the kernel reads it.
std::vector<int> textured_blocks(const std::vector<float>& image, std::array<int, 3> dim, double share,
                                 const LevelMask* reference_mask, int& used) {
  const std::array<int, 3> bd = block_dim(dim);
  const std::size_t blocks = product(bd);
  std::vector<double> variance(blocks, 0.0);
  // Every voxel of the level is read once: spread over the cores.
  for_each_on_threads(blocks, [&](std::size_t b) {
    double sum = 0, squares = 0;
    int n = 0;
    bool inside = true;
    for_each_block_voxel(block_origin(b, bd), dim, [&](std::size_t i) {
      const double v = image[i];
      sum += v;
      squares += v * v;
      ++n;
      if (reference_mask && !(*reference_mask)[i]) inside = false;
    });
    variance[b] = inside && n >= kMinimumBlockVoxels ? squares / n - (sum / n) * (sum / n) : 0.0;
  });
  std::vector<std::size_t> textured;
  for (std::size_t b = 0; b < blocks; ++b)
    if (variance[b] > 1e-12) textured.push_back(b);
  const std::size_t keep = static_cast<std::size_t>(std::ceil(share * static_cast<double>(textured.size())));
  std::nth_element(textured.begin(), textured.begin() + static_cast<std::ptrdiff_t>(keep), textured.end(),
                   [&](std::size_t a, std::size_t b) { return variance[a] > variance[b]; });
  textured.resize(keep);
  used = static_cast<int>(keep);
  std::vector<int> mask(product(dim), 0);
  for (std::size_t b : textured) for_each_block_voxel(block_origin(b, bd), dim, [&](std::size_t i) { mask[i] = 1; });
  return mask;
}

// One pyramid level's images and buffers on the device.
class LevelMatcher {
 public:
  LevelMatcher(const KernelRunner& runner, const Buffer& reference, const Buffer& floating, std::array<int, 3> dim,
               std::array<int, 3> floating_dim, const AffineOptions& options, const LevelMask* reference_mask)
      : runner_(runner), reference_(reference), floating_(floating), dim_(dim), blocks_(block_dim(dim)) {
    const auto start = std::chrono::steady_clock::now();
    ComputeDevice& d = runner.device();
    const std::size_t n = product(dim);
    active_ = active_voxel_list(d, n);
    mask_ = Buffer(d, n * 4);
    reference_host_ = reference.download<float>();
    mask_.upload(textured_blocks(reference_host_, dim, options.block_share, reference_mask, used_blocks_));
    matrix_ = Buffer(d, 12 * 4);
    deformation_ = Buffer(d, n * 16);
    warped_ = Buffer(d, n * 4);
    results_ = Buffer(d, product(blocks_) * 16);
    // The spacing (5) is read by no kernel of the stage: only the sizes matter.
    vars_ = with(level_variables(dim, 5, floating_dim),
                 {{"blockDimX", blocks_[0]}, {"blockDimY", blocks_[1]}, {"blockDimZ", blocks_[2]},
                  {"blockNumber", static_cast<double>(product(blocks_))},
                  {"minimumVoxelNumber", kMinimumBlockVoxels}, {"searchRadius", options.search_radius}});
    selection_seconds_ = seconds_since(start);
  }

  int used_blocks() const { return used_blocks_; }
  double selection_seconds() const { return selection_seconds_; }
  double matching_seconds() const { return matching_seconds_; }
  double refinement_seconds() const { return refinement_seconds_; }

  // Each matched block's centre and where its match lies in the floating
  // image, both in this level's voxels, under the transform `m` (level voxels).
  std::vector<PointPair> match(const Matrix4& m) {
    const auto start = std::chrono::steady_clock::now();
    matrix_.upload(rows12(m));
    runner_.run("global/affine_deformation",
                {{"transformationMatrix", &matrix_}, {"activeVoxels", &active_}, {"deformationField", &deformation_}},
                vars_);
    runner_.run("resampling/trilinear",
                {{"floatingImage", &floating_}, {"deformationField", &deformation_}, {"activeVoxels", &active_},
                 {"warpedImage", &warped_}},
                vars_);
    runner_.run("blockmatching/ncc_block_matching",
                {{"referenceImage", &reference_}, {"warpedImage", &warped_}, {"mask", &mask_},
                 {"blockResults", &results_}},
                vars_);
    const std::vector<float> r = results_.download<float>();
    const std::vector<float> warped = warped_.download<float>();
    std::vector<std::size_t> matched;
    for (std::size_t b = 0; b < product(blocks_); ++b)
      if (r[4 * b + 3] > kNoMatch) matched.push_back(b);
    const auto refinement_start = std::chrono::steady_clock::now();
    matching_seconds_ += seconds_since(start);
    std::vector<PointPair> pairs(matched.size());
    // The sub-voxel refinement scores six displacements per block on the
    // host: spread over the cores.
    for_each_on_threads(matched.size(), [&](std::size_t i) {
      const std::size_t b = matched[i];
      const std::array<int, 3> origin = block_origin(b, blocks_);
      const std::array<int, 3> d = {static_cast<int>(r[4 * b]), static_cast<int>(r[4 * b + 1]),
                                    static_cast<int>(r[4 * b + 2])};
      const std::array<double, 3> fraction = subvoxel_offset(reference_host_, warped, dim_, origin, d);
      Point3 centre, moved;
      for (int a = 0; a < 3; ++a) {
        // The centre of the block's voxels (a border block's are fewer).
        centre[a] = (origin[a] + std::min(dim_[a], origin[a] + kBlock) - 1) / 2.0;
        moved[a] = centre[a] + d[a] + fraction[a];
      }
      // The match sits at `moved` in the resampled image, which is the
      // floating image at m(moved).
      pairs[i] = {centre, transform_point(m, moved)};
    });
    refinement_seconds_ += seconds_since(refinement_start);
    return pairs;
  }

 private:
  const KernelRunner& runner_;
  const Buffer& reference_;
  const Buffer& floating_;
  std::array<int, 3> dim_, blocks_;
  int used_blocks_ = 0;
  double selection_seconds_ = 0, matching_seconds_ = 0, refinement_seconds_ = 0;
  fitness::Variables vars_;
  std::vector<float> reference_host_;
  Buffer active_, mask_, matrix_, deformation_, warped_, results_;
};

// The largest distance a point of the image's box moves between two
// transforms (voxels): a fit that changes nothing by a hundredth of a voxel
// has converged.
double largest_change(const Matrix4& a, const Matrix4& b, std::array<int, 3> dim) {
  double change = 0;
  for (int corner = 0; corner < 8; ++corner) {
    const Point3 p = {corner & 1 ? dim[0] - 1.0 : 0.0, corner & 2 ? dim[1] - 1.0 : 0.0, corner & 4 ? dim[2] - 1.0 : 0.0};
    const Point3 pa = transform_point(a, p), pb = transform_point(b, p);
    change = std::max(change, std::hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]));
  }
  return change;
}

}  // namespace

AffineResult align_affine(const KernelRunner& runner, const std::vector<const Buffer*>& references,
                          const std::vector<const Buffer*>& floatings, const std::vector<std::array<int, 3>>& dims,
                          const std::vector<std::array<int, 3>>& floating_dims, const Matrix4& reference_voxel_to_world,
                          const Matrix4& floating_voxel_to_world, const AffineOptions& options,
                          const std::vector<LevelMask>& masks) {
  const auto start = std::chrono::steady_clock::now();
  AffineResult result;
  // The headers' own alignment: a reference voxel goes where its world point
  // lies in the floating image.
  Matrix4 m = multiply(inverse(floating_voxel_to_world), reference_voxel_to_world);
  result.voxel_transform = m;
  if (options.mode == AffineMode::None) return result;
  for (int level = static_cast<int>(dims.size()) - 1; level >= 0; --level) {
    LevelMatcher matcher(runner, *references[level], *floatings[level], dims[level], floating_dims[level], options,
                         masks.empty() ? nullptr : &masks[level]);
    AffineLevelReport report;
    report.level = level;
    report.blocks = matcher.used_blocks();
    // The fits are made in world millimetres, where rigid means rigid.
    const Matrix4 reference_to_world = multiply(reference_voxel_to_world, level_scale(level));
    const Matrix4 floating_to_world = multiply(floating_voxel_to_world, level_scale(level));
    const Matrix4 world_to_floating = inverse(floating_to_world);
    // As reg_aladin: in Affine mode the rigid fits run at the coarsest level
    // only, to bring the images close before 12 parameters are let loose.
    const bool coarsest = level == static_cast<int>(dims.size()) - 1;
    const int rigid = options.mode == AffineMode::Rigid || coarsest ? options.rigid_iterations : 0;
    const int total = rigid + (options.mode == AffineMode::Affine ? options.affine_iterations : 0);
    for (int iteration = 0; iteration < total; ++iteration) {
      const TransformKind kind = iteration < rigid ? TransformKind::Rigid : TransformKind::Affine;
      const Matrix4 m_level = at_level(m, level);
      std::vector<PointPair> pairs = matcher.match(m_level);
      report.matches = static_cast<int>(pairs.size());
      if (pairs.size() < kMinimumMatches) {
        // A coarse level of a small image has few blocks: the finer levels
        // go on from here. At the finest there is nothing left to go on with.
        if (level > 0) break;
        throw std::runtime_error("affine stage: only " + std::to_string(pairs.size()) + " of " +
                                 std::to_string(report.blocks) + " textured blocks matched at the finest level (" +
                                 "the images may not overlap; --no-affine skips the stage)");
      }
      for (PointPair& p : pairs)
        p = {transform_point(reference_to_world, p.from), transform_point(floating_to_world, p.to)};
      const auto fit_start = std::chrono::steady_clock::now();
      const FitResult fit = fit_transform(pairs, kind, options.inlier_share);
      report.fit_seconds += seconds_since(fit_start);
      // world -> world into level voxels -> level voxels, then finest voxels.
      const Matrix4 next_level = multiply(world_to_floating, multiply(fit.transform, reference_to_world));
      const Matrix4 next = multiply(level_scale(level), multiply(next_level, inverse(level_scale(level))));
      report.iterations = iteration + 1;
      report.inliers = static_cast<int>(fit.inliers);
      report.rms_mm = fit.rms;
      const double change = largest_change(at_level(next, level), m_level, dims[level]);
      m = next;
      // The rigid iterations end early when converged; the affine ones follow.
      if (change < 0.01) {
        if (kind == TransformKind::Affine || options.mode == AffineMode::Rigid) break;
        iteration = rigid - 1;
      }
    }
    report.selection_seconds = matcher.selection_seconds();
    report.matching_seconds = matcher.matching_seconds();
    report.refinement_seconds = matcher.refinement_seconds();
    result.levels.push_back(report);
  }
  result.voxel_transform = m;
  result.world_transform = multiply(floating_voxel_to_world, multiply(m, inverse(reference_voxel_to_world)));
  result.seconds = seconds_since(start);
  return result;
}

std::vector<float> grid_of_affine(const Matrix4& voxel_transform, int level, std::array<int, 3> grid_dim,
                                  double spacing) {
  const Matrix4 m = at_level(voxel_transform, level);
  std::vector<float> nodes(4 * product(grid_dim), 0.f);
  std::size_t i = 0;
  for (int z = 0; z < grid_dim[2]; ++z)
    for (int y = 0; y < grid_dim[1]; ++y)
      for (int x = 0; x < grid_dim[0]; ++x, ++i) {
        const Point3 p = {(x - 1) * spacing, (y - 1) * spacing, (z - 1) * spacing};
        const Point3 q = transform_point(m, p);
        for (int c = 0; c < 3; ++c) nodes[4 * i + c] = static_cast<float>(q[c] - p[c]);
      }
  return nodes;
}

}  // namespace gi::reg
