#include "seeds/bspline/jacobian_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "seeds/common/bspline.hpp"
#include "seeds/common/rng.hpp"

namespace gi::seeds::jacobian {

namespace {

// Basis and derivative at a node (u = 0) for the neighbours at offsets -1, 0, +1.
constexpr double kNodeBasis[3] = {1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0};
constexpr double kNodeDerivative[3] = {-0.5, 0.0, 0.5};

// A stream of its own for the fold centres and the redraws (rng.hpp's list is shared).
constexpr std::uint64_t kStreamFolds = 0x6a61636f6269616eULL;

void check_grid(const std::vector<Float4>& grid, Dim3 grid_dims, const char* who) {
  if (grid.size() != grid_dims.voxels())
    throw std::runtime_error(std::string(who) + ": the grid holds " + std::to_string(grid.size()) +
                             " points, its dimensions say " + std::to_string(grid_dims.voxels()));
  if (grid_dims.x < 3 || grid_dims.y < 3 || grid_dims.z < 3)
    throw std::runtime_error(std::string(who) + ": a control grid needs at least 3 points per axis");
}

}  // namespace

Dim3 interior_nodes(Dim3 grid) { return Dim3{grid.x - 2, grid.y - 2, grid.z - 2}; }

double determinant(const Matrix& m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
         m[2] * (m[3] * m[7] - m[4] * m[6]);
}

double log_jacobian_penalty(const Matrix& m) {
  const double det = determinant(m);
  if (!(det > 0)) return kFoldPenalty;
  const double l = std::log(det);
  return l * l;
}

Matrix log_jacobian_term(const Matrix& m) {
  const double det = determinant(m);
  if (!(det > 0)) return Matrix{};
  // m^{-T} = cofactor matrix / det.
  const Matrix cofactor = {m[4] * m[8] - m[5] * m[7], m[5] * m[6] - m[3] * m[8], m[3] * m[7] - m[4] * m[6],
                           m[2] * m[7] - m[1] * m[8], m[0] * m[8] - m[2] * m[6], m[1] * m[6] - m[0] * m[7],
                           m[1] * m[5] - m[2] * m[4], m[2] * m[3] - m[0] * m[5], m[0] * m[4] - m[1] * m[3]};
  const double scale = 2.0 * std::log(det) / det;
  Matrix term;
  for (int i = 0; i < 9; ++i) term[static_cast<std::size_t>(i)] = scale * cofactor[static_cast<std::size_t>(i)];
  return term;
}

void bspline_basis_derivative(double u, double basis[4], double derivative[4]) {
  bspline_basis(u, basis);
  const double v = 1.0 - u;
  derivative[0] = -0.5 * v * v;
  derivative[1] = 1.5 * u * u - 2.0 * u;
  derivative[2] = -1.5 * u * u + u + 0.5;
  derivative[3] = 0.5 * u * u;
}

std::vector<Matrix> node_jacobians(const std::vector<Float4>& grid, Dim3 grid_dims, const Spacing& spacing) {
  check_grid(grid, grid_dims, "node_jacobians");
  const Dim3 nodes = interior_nodes(grid_dims);
  std::vector<Matrix> out(nodes.voxels());
  parallel_for(out.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t n = begin; n < end; ++n) {
      const int i = static_cast<int>(n % static_cast<std::size_t>(nodes.x)) + 1;
      const int j = static_cast<int>((n / static_cast<std::size_t>(nodes.x)) % static_cast<std::size_t>(nodes.y)) + 1;
      const int k = static_cast<int>(n / (static_cast<std::size_t>(nodes.x) * static_cast<std::size_t>(nodes.y))) + 1;
      out[n] = node_jacobian(grid, grid_dims, spacing, i, j, k);
    }
  });
  return out;
}

std::vector<Matrix> voxel_jacobians(const std::vector<Float4>& grid, Dim3 grid_dims, Dim3 image,
                                    const Spacing& spacing, const std::vector<std::int32_t>& active) {
  check_grid(grid, grid_dims, "voxel_jacobians");
  const int dims[3] = {image.x, image.y, image.z};
  const int points[3] = {grid_dims.x, grid_dims.y, grid_dims.z};
  for (int a = 0; a < 3; ++a) {
    if (!(spacing[static_cast<std::size_t>(a)] > 0)) throw std::runtime_error("voxel_jacobians: spacing must be positive");
    const int last = static_cast<int>(std::floor((dims[a] - 1) / spacing[static_cast<std::size_t>(a)])) + 3;
    if (last >= points[a])
      throw std::runtime_error("voxel_jacobians: axis " + std::to_string(a) + " needs " + std::to_string(last + 1) +
                               " control points, the grid has " + std::to_string(points[a]));
  }
  for (const std::int32_t i : active)
    if (i < 0 || static_cast<std::size_t>(i) >= image.voxels())
      throw std::runtime_error("voxel_jacobians: active voxel index " + std::to_string(i) + " outside the image");
  std::vector<Matrix> out(active.size());
  const std::size_t slice = static_cast<std::size_t>(image.x) * static_cast<std::size_t>(image.y);
  parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto index = static_cast<std::size_t>(active[t]);
      const int pos[3] = {static_cast<int>(index % static_cast<std::size_t>(image.x)),
                          static_cast<int>((index % slice) / static_cast<std::size_t>(image.x)),
                          static_cast<int>(index / slice)};
      int pre[3];
      double basis[3][4], derivative[3][4];
      for (int a = 0; a < 3; ++a) {
        const double g = pos[a] / spacing[static_cast<std::size_t>(a)];
        pre[a] = static_cast<int>(std::floor(g));
        bspline_basis_derivative(g - pre[a], basis[a], derivative[a]);
      }
      Matrix m{};
      for (int c = 0; c < 4; ++c)
        for (int b = 0; b < 4; ++b)
          for (int a = 0; a < 4; ++a) {
            const Float4& p = grid[grid_dims.index(pre[0] + a, pre[1] + b, pre[2] + c)];
            const double g[3] = {derivative[0][a] * basis[1][b] * basis[2][c] / spacing[0],
                                 basis[0][a] * derivative[1][b] * basis[2][c] / spacing[1],
                                 basis[0][a] * basis[1][b] * derivative[2][c] / spacing[2]};
            const double d[3] = {p.x, p.y, p.z};
            for (int r = 0; r < 3; ++r)
              for (int q = 0; q < 3; ++q) m[static_cast<std::size_t>(3 * r + q)] += d[r] * g[q];
          }
      m[0] += 1.0;
      m[4] += 1.0;
      m[8] += 1.0;
      out[t] = m;
    }
  });
  return out;
}

std::vector<double> node_penalty_gradient(const std::vector<Matrix>& node_matrices, Dim3 grid_dims,
                                          const Spacing& spacing) {
  const Dim3 nodes = interior_nodes(grid_dims);
  if (grid_dims.x < 3 || grid_dims.y < 3 || grid_dims.z < 3 || node_matrices.size() != nodes.voxels())
    throw std::runtime_error("node_penalty_gradient: " + std::to_string(node_matrices.size()) +
                             " node matrices do not match the control grid");
  std::vector<Matrix> terms(node_matrices.size());
  for (std::size_t n = 0; n < terms.size(); ++n) terms[n] = log_jacobian_term(node_matrices[n]);
  std::vector<double> out(4 * grid_dims.voxels());
  parallel_for(grid_dims.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t m = begin; m < end; ++m) {
      const int x = static_cast<int>(m % static_cast<std::size_t>(grid_dims.x));
      const int y = static_cast<int>((m / static_cast<std::size_t>(grid_dims.x)) % static_cast<std::size_t>(grid_dims.y));
      const int z = static_cast<int>(m / (static_cast<std::size_t>(grid_dims.x) * static_cast<std::size_t>(grid_dims.y)));
      double grad[3] = {0, 0, 0};
      for (int c = 0; c < 3; ++c)
        for (int b = 0; b < 3; ++b)
          for (int a = 0; a < 3; ++a) {
            // This control point is the node's neighbour at offset (a - 1, b - 1, c - 1).
            const int nx = x + 1 - a, ny = y + 1 - b, nz = z + 1 - c;
            if (nx < 1 || nx > nodes.x || ny < 1 || ny > nodes.y || nz < 1 || nz > nodes.z) continue;
            const Matrix& t = terms[nodes.index(nx - 1, ny - 1, nz - 1)];
            const double g[3] = {kNodeDerivative[a] * kNodeBasis[b] * kNodeBasis[c] / spacing[0],
                                 kNodeBasis[a] * kNodeDerivative[b] * kNodeBasis[c] / spacing[1],
                                 kNodeBasis[a] * kNodeBasis[b] * kNodeDerivative[c] / spacing[2]};
            for (int r = 0; r < 3; ++r)
              for (int q = 0; q < 3; ++q) grad[r] += t[static_cast<std::size_t>(3 * r + q)] * g[q];
          }
      for (int r = 0; r < 3; ++r) out[4 * m + static_cast<std::size_t>(r)] = grad[r];
      out[4 * m + 3] = 0.0;
    }
  });
  return out;
}

std::vector<double> voxel_penalty_gradient(const std::vector<float>& terms, const std::vector<std::int32_t>& voxel_to_active,
                                           Dim3 image, Dim3 grid_dims, const Spacing& spacing) {
  if (voxel_to_active.size() != image.voxels())
    throw std::runtime_error("voxel_penalty_gradient: the voxel map holds " + std::to_string(voxel_to_active.size()) +
                             " entries for " + std::to_string(image.voxels()) + " voxels");
  for (const std::int32_t a : voxel_to_active)
    if (a < -1 || (a >= 0 && 9 * static_cast<std::size_t>(a) + 9 > terms.size()))
      throw std::runtime_error("voxel_penalty_gradient: voxel map entry " + std::to_string(a) +
                               " has no term (" + std::to_string(terms.size() / 9) + " active voxels)");
  // Per axis and control point: the voxels in its support, with their weights.
  struct Tap {
    int voxel;
    double basis, derivative;
  };
  const int dims[3] = {image.x, image.y, image.z};
  const int points[3] = {grid_dims.x, grid_dims.y, grid_dims.z};
  std::array<std::vector<std::vector<Tap>>, 3> taps;
  for (int axis = 0; axis < 3; ++axis) {
    taps[static_cast<std::size_t>(axis)].resize(static_cast<std::size_t>(points[axis]));
    for (int v = 0; v < dims[axis]; ++v) {
      const double g = v / spacing[static_cast<std::size_t>(axis)];
      const int pre = static_cast<int>(std::floor(g));
      double basis[4], derivative[4];
      bspline_basis_derivative(g - pre, basis, derivative);
      for (int a = 0; a < 4; ++a) {
        if (pre + a >= points[axis])
          throw std::runtime_error("voxel_penalty_gradient: axis " + std::to_string(axis) +
                                   " has too few control points for the image");
        taps[static_cast<std::size_t>(axis)][static_cast<std::size_t>(pre + a)].push_back(
            Tap{v, basis[a], derivative[a] / spacing[static_cast<std::size_t>(axis)]});
      }
    }
  }
  std::vector<double> out(4 * grid_dims.voxels());
  parallel_for(grid_dims.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t m = begin; m < end; ++m) {
      const auto x = m % static_cast<std::size_t>(grid_dims.x);
      const auto y = (m / static_cast<std::size_t>(grid_dims.x)) % static_cast<std::size_t>(grid_dims.y);
      const auto z = m / (static_cast<std::size_t>(grid_dims.x) * static_cast<std::size_t>(grid_dims.y));
      double grad[3] = {0, 0, 0};
      for (const Tap& tz : taps[2][z])
        for (const Tap& ty : taps[1][y])
          for (const Tap& tx : taps[0][x]) {
            const std::int32_t a = voxel_to_active[image.index(tx.voxel, ty.voxel, tz.voxel)];
            if (a < 0) continue;
            const float* t = terms.data() + 9 * static_cast<std::size_t>(a);
            const double g[3] = {tx.derivative * ty.basis * tz.basis, tx.basis * ty.derivative * tz.basis,
                                 tx.basis * ty.basis * tz.derivative};
            for (int r = 0; r < 3; ++r)
              for (int q = 0; q < 3; ++q) grad[r] += static_cast<double>(t[3 * r + q]) * g[q];
          }
      for (int r = 0; r < 3; ++r) out[4 * m + static_cast<std::size_t>(r)] = grad[r];
      out[4 * m + 3] = 0.0;
    }
  });
  return out;
}

namespace {

// One fold: displacement along `axis` of -strength * (offset along axis) *
// (1 - r^2 / R^2)^3 within R control points of the centre (smooth, compact).
// Compressing one axis only makes det J change sign transversally through
// zero (a compression of all three axes would touch zero in a shell where two
// factors vanish together, and put many nodes next to 0).
constexpr double kFoldRadius = 3.0;    // control points
constexpr double kFoldStrength = 2.5;  // displacement gradient at the centre

struct Box {
  int lo[3], hi[3];  // inclusive control-point ranges
};

Box fold_box(Dim3 g, const double centre[3], int extra) {
  const int dims[3] = {g.x, g.y, g.z};
  Box b;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = std::max(0, static_cast<int>(std::floor(centre[a] - kFoldRadius)) - extra);
    b.hi[a] = std::min(dims[a] - 1, static_cast<int>(std::ceil(centre[a] + kFoldRadius)) + extra);
  }
  return b;
}

void add_fold(std::vector<Float4>& grid, Dim3 g, const Spacing& spacing, const double centre[3], int axis) {
  const Box b = fold_box(g, centre, 0);
  for (int k = b.lo[2]; k <= b.hi[2]; ++k)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j)
      for (int i = b.lo[0]; i <= b.hi[0]; ++i) {
        const double e[3] = {i - centre[0], j - centre[1], k - centre[2]};
        const double q = 1.0 - (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]) / (kFoldRadius * kFoldRadius);
        if (q <= 0) continue;
        const double d = -kFoldStrength * e[axis] * spacing[static_cast<std::size_t>(axis)] * q * q * q;
        Float4& p = grid[g.index(i, j, k)];
        float* c[3] = {&p.x, &p.y, &p.z};
        *c[axis] = static_cast<float>(*c[axis] + d);
      }
}

}  // namespace

Matrix node_jacobian(const std::vector<Float4>& grid, Dim3 grid_dims, const Spacing& spacing, int i, int j, int k) {
  Matrix m{};
  for (int c = 0; c < 3; ++c)
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        const Float4& p = grid[grid_dims.index(i + a - 1, j + b - 1, k + c - 1)];
        const double g[3] = {kNodeDerivative[a] * kNodeBasis[b] * kNodeBasis[c] / spacing[0],
                             kNodeBasis[a] * kNodeDerivative[b] * kNodeBasis[c] / spacing[1],
                             kNodeBasis[a] * kNodeBasis[b] * kNodeDerivative[c] / spacing[2]};
        const double d[3] = {p.x, p.y, p.z};
        for (int r = 0; r < 3; ++r)
          for (int q = 0; q < 3; ++q) m[static_cast<std::size_t>(3 * r + q)] += d[r] * g[q];
      }
  m[0] += 1.0;
  m[4] += 1.0;
  m[8] += 1.0;
  return m;
}

std::vector<Float4> jacobian_control_grid(Dim3 grid_dims, const Spacing& spacing, double amplitude, int folds,
                                          double min_node_margin, std::uint64_t seed) {
  constexpr int kTries = 64;
  if (grid_dims.x < 3 || grid_dims.y < 3 || grid_dims.z < 3)
    throw std::runtime_error("jacobian_control_grid: a control grid needs at least 3 points per axis");
  for (int attempt = 0; attempt < kTries; ++attempt) {
    // The first try is smooth_control_grid's field for this seed itself.
    const std::uint64_t s = attempt == 0 ? seed : hash3(seed, kStreamFolds, static_cast<std::uint64_t>(attempt));
    std::vector<Float4> grid = smooth_control_grid(grid_dims, amplitude, s);
    Rng rng(s, kStreamFolds);
    bool placed_all = true;
    for (int f = 0; f < folds && placed_all; ++f) {
      // Place each fold where no node near it ends up within the margin of 0.
      bool placed = false;
      for (int t = 0; t < kTries && !placed; ++t) {
        const double centre[3] = {rng.uniform(1.0, grid_dims.x - 2.0), rng.uniform(1.0, grid_dims.y - 2.0),
                                  rng.uniform(1.0, grid_dims.z - 2.0)};
        const int axis = static_cast<int>(rng.next() % 3);
        const Box b = fold_box(grid_dims, centre, 1);
        std::vector<Float4> saved;
        for (int k = b.lo[2]; k <= b.hi[2]; ++k)
          for (int j = b.lo[1]; j <= b.hi[1]; ++j)
            for (int i = b.lo[0]; i <= b.hi[0]; ++i) saved.push_back(grid[grid_dims.index(i, j, k)]);
        add_fold(grid, grid_dims, spacing, centre, axis);
        placed = true;
        for (int k = std::max(1, b.lo[2]); k <= std::min(grid_dims.z - 2, b.hi[2]) && placed; ++k)
          for (int j = std::max(1, b.lo[1]); j <= std::min(grid_dims.y - 2, b.hi[1]) && placed; ++j)
            for (int i = std::max(1, b.lo[0]); i <= std::min(grid_dims.x - 2, b.hi[0]) && placed; ++i)
              placed = std::fabs(determinant(node_jacobian(grid, grid_dims, spacing, i, j, k))) >= min_node_margin;
        if (!placed) {
          std::size_t n = 0;
          for (int k = b.lo[2]; k <= b.hi[2]; ++k)
            for (int j = b.lo[1]; j <= b.hi[1]; ++j)
              for (int i = b.lo[0]; i <= b.hi[0]; ++i) grid[grid_dims.index(i, j, k)] = saved[n++];
        }
      }
      placed_all = placed;
    }
    if (!placed_all) continue;
    if (min_node_margin <= 0) return grid;
    double closest = std::numeric_limits<double>::infinity();
    for (const Matrix& m : node_jacobians(grid, grid_dims, spacing)) closest = std::min(closest, std::fabs(determinant(m)));
    if (closest >= min_node_margin) return grid;
  }
  throw std::runtime_error("jacobian_control_grid: no draw in " + std::to_string(kTries) +
                           " kept every node determinant at least " + std::to_string(min_node_margin) +
                           " away from 0 (lower the amplitude or the folds)");
}

GridSetup read_grid_setup(const GeneratorArgs& args) {
  GridSetup s;
  s.image = args.dims("dim", Dim3{217, 217, 217});
  s.spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  for (double& v : s.spacing) v = static_cast<float>(v);  // the kernels receive floats
  s.amplitude = args.number("amplitude", 3.0, 0.0, 50.0);
  s.folds = args.integer("folds", 0, 0, 16);
  s.grid = control_grid_dims(s.image, s.spacing);
  return s;
}

void add_grid_variables(fitness::Workload& w, const GridSetup& s) {
  const Dim3 nodes = interior_nodes(s.grid);
  w.variables["imageDimX"] = s.image.x;
  w.variables["imageDimY"] = s.image.y;
  w.variables["imageDimZ"] = s.image.z;
  w.variables["voxelNumber"] = static_cast<double>(s.image.voxels());
  w.variables["spacingX"] = s.spacing[0];
  w.variables["spacingY"] = s.spacing[1];
  w.variables["spacingZ"] = s.spacing[2];
  w.variables["controlPointDimX"] = s.grid.x;
  w.variables["controlPointDimY"] = s.grid.y;
  w.variables["controlPointDimZ"] = s.grid.z;
  w.variables["controlPointNumber"] = static_cast<double>(s.grid.voxels());
  w.variables["jacobianNodeNumber"] = static_cast<double>(nodes.voxels());
}

GridSetup grid_variables(const fitness::Workload& w, const char* who) {
  GridSetup s;
  s.image = Dim3{workload_int(w, "imageDimX", who), workload_int(w, "imageDimY", who), workload_int(w, "imageDimZ", who)};
  s.grid = Dim3{workload_int(w, "controlPointDimX", who), workload_int(w, "controlPointDimY", who),
                workload_int(w, "controlPointDimZ", who)};
  const char* names[3] = {"spacingX", "spacingY", "spacingZ"};
  for (int a = 0; a < 3; ++a) {
    const auto it = w.variables.find(names[a]);
    if (it == w.variables.end())
      throw std::runtime_error(std::string(who) + " reference: no variable '" + names[a] + "'");
    s.spacing[static_cast<std::size_t>(a)] = it->second;
  }
  if (s.grid.x < 3 || s.grid.y < 3 || s.grid.z < 3)
    throw std::runtime_error(std::string(who) + " reference: the control grid needs at least 3 points per axis");
  return s;
}

}  // namespace gi::seeds::jacobian
