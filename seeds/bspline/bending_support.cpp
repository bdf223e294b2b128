#include "seeds/bspline/bending_support.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "seeds/common/bspline.hpp"
#include "seeds/common/rng.hpp"

namespace gi::seeds::bending {

namespace {

// Not one of rng.hpp's streams (seeds/common is shared): far from them.
constexpr std::uint64_t kStreamFoldSites = 0xb5f01d;

constexpr double kValue[3] = {1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0};
constexpr double kFirst[3] = {-0.5, 0.0, 0.5};
constexpr double kSecond[3] = {1.0, -2.0, 1.0};

void check_size(std::size_t n, Dim3 grid, const char* who) {
  if (n != grid.voxels())
    throw std::runtime_error(std::string(who) + ": " + std::to_string(n) + " nodes, the grid dimensions say " +
                             std::to_string(grid.voxels()));
}

// Calls body(node, i, j, k) for every node, in parallel.
template <typename Body>
void for_each_node(Dim3 grid, const Body& body) {
  const auto nx = static_cast<std::size_t>(grid.x), ny = static_cast<std::size_t>(grid.y);
  parallel_for(grid.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t n = begin; n < end; ++n)
      body(n, static_cast<int>(n % nx), static_cast<int>((n / nx) % ny), static_cast<int>(n / (nx * ny)));
  });
}

}  // namespace

bool interior_node(Dim3 grid, int i, int j, int k) {
  return i > 0 && i < grid.x - 1 && j > 0 && j < grid.y - 1 && k > 0 && k < grid.z - 1;
}

std::size_t interior_node_number(Dim3 grid) {
  auto inner = [](int n) { return static_cast<std::size_t>(n > 2 ? n - 2 : 0); };
  return inner(grid.x) * inner(grid.y) * inner(grid.z);
}

std::vector<Vec3> displacements(const std::vector<Float4>& points) {
  std::vector<Vec3> out(points.size());
  for (std::size_t n = 0; n < points.size(); ++n) out[n] = {points[n].x, points[n].y, points[n].z};
  return out;
}

double second_derivative_weight(int which, int a, int b, int c, const Spacing& s) {
  switch (which) {
    case kXX: return kSecond[a] / (s[0] * s[0]) * kValue[b] * kValue[c];
    case kYY: return kValue[a] * kSecond[b] / (s[1] * s[1]) * kValue[c];
    case kZZ: return kValue[a] * kValue[b] * kSecond[c] / (s[2] * s[2]);
    case kXY: return kFirst[a] / s[0] * kFirst[b] / s[1] * kValue[c];
    case kYZ: return kValue[a] * kFirst[b] / s[1] * kFirst[c] / s[2];
    case kXZ: return kFirst[a] / s[0] * kValue[b] * kFirst[c] / s[2];
    default: throw std::runtime_error("second_derivative_weight: no derivative " + std::to_string(which));
  }
}

double first_derivative_weight(int axis, int a, int b, int c, const Spacing& s) {
  switch (axis) {
    case 0: return kFirst[a] / s[0] * kValue[b] * kValue[c];
    case 1: return kValue[a] * kFirst[b] / s[1] * kValue[c];
    case 2: return kValue[a] * kValue[b] * kFirst[c] / s[2];
    default: throw std::runtime_error("first_derivative_weight: no axis " + std::to_string(axis));
  }
}

std::vector<SecondDerivatives> node_second_derivatives(const std::vector<Vec3>& points, Dim3 grid,
                                                        const Spacing& spacing) {
  check_size(points.size(), grid, "node_second_derivatives");
  double weights[6][27];
  for (int d = 0; d < 6; ++d)
    for (int s = 0; s < 27; ++s) weights[d][s] = second_derivative_weight(d, s % 3, (s / 3) % 3, s / 9, spacing);
  std::vector<SecondDerivatives> out(points.size());
  for_each_node(grid, [&](std::size_t node, int i, int j, int k) {
    SecondDerivatives d{};
    if (interior_node(grid, i, j, k)) {
      for (int s = 0; s < 27; ++s) {
        const Vec3& p = points[grid.index(i + s % 3 - 1, j + (s / 3) % 3 - 1, k + s / 9 - 1)];
        for (int which = 0; which < 6; ++which)
          for (int comp = 0; comp < 3; ++comp) d[which][comp] += weights[which][s] * p[comp];
      }
    }
    out[node] = d;
  });
  return out;
}

double bending_energy_of(const SecondDerivatives& d) {
  double e = 0;
  for (int comp = 0; comp < 3; ++comp) {
    e += d[kXX][comp] * d[kXX][comp] + d[kYY][comp] * d[kYY][comp] + d[kZZ][comp] * d[kZZ][comp];
    e += 2.0 * (d[kXY][comp] * d[kXY][comp] + d[kYZ][comp] * d[kYZ][comp] + d[kXZ][comp] * d[kXZ][comp]);
  }
  return e;
}

std::vector<double> node_bending_energy(const std::vector<Vec3>& points, Dim3 grid, const Spacing& spacing) {
  const auto second = node_second_derivatives(points, grid, spacing);
  std::vector<double> out(second.size());
  for (std::size_t n = 0; n < second.size(); ++n) out[n] = bending_energy_of(second[n]);
  return out;
}

double total_bending_energy(const std::vector<Vec3>& points, Dim3 grid, const Spacing& spacing) {
  double sum = 0;
  for (const double e : node_bending_energy(points, grid, spacing)) sum += e;
  return sum;
}

std::vector<Vec3> bending_energy_gradient(const std::vector<SecondDerivatives>& second, Dim3 grid,
                                          const Spacing& spacing) {
  check_size(second.size(), grid, "bending_energy_gradient");
  // d(xx^2)/dP = 2 xx W_xx; the cross terms carry their factor 2 of the energy: 4 xy W_xy.
  double weights[6][27];
  for (int d = 0; d < 6; ++d)
    for (int s = 0; s < 27; ++s)
      weights[d][s] = (d < 3 ? 2.0 : 4.0) * second_derivative_weight(d, s % 3, (s / 3) % 3, s / 9, spacing);
  std::vector<Vec3> out(second.size());
  for_each_node(grid, [&](std::size_t m, int i, int j, int k) {
    Vec3 g{};
    for (int s = 0; s < 27; ++s) {
      // Node n = m - offset sees m at stencil index s.
      const int a = s % 3, b = (s / 3) % 3, c = s / 9;
      const int X = i + 1 - a, Y = j + 1 - b, Z = k + 1 - c;
      if (!interior_node(grid, X, Y, Z)) continue;
      const SecondDerivatives& d = second[grid.index(X, Y, Z)];
      for (int which = 0; which < 6; ++which)
        for (int comp = 0; comp < 3; ++comp) g[comp] += weights[which][s] * d[which][comp];
    }
    out[m] = g;
  });
  return out;
}

std::vector<Matrix3> node_jacobians(const std::vector<Vec3>& points, Dim3 grid, const Spacing& spacing) {
  check_size(points.size(), grid, "node_jacobians");
  std::vector<Matrix3> out(points.size());
  for_each_node(grid, [&](std::size_t node, int i, int j, int k) {
    Matrix3 m{1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (interior_node(grid, i, j, k)) {
      for (int s = 0; s < 27; ++s) {
        const int a = s % 3, b = (s / 3) % 3, c = s / 9;
        const Vec3& p = points[grid.index(i + a - 1, j + b - 1, k + c - 1)];
        for (int axis = 0; axis < 3; ++axis) {
          const double w = first_derivative_weight(axis, a, b, c, spacing);
          for (int comp = 0; comp < 3; ++comp) m[3 * comp + axis] += w * p[comp];
        }
      }
    }
    out[node] = m;
  });
  return out;
}

double determinant(const Matrix3& m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}

Matrix3 cofactors(const Matrix3& m) {
  return {m[4] * m[8] - m[5] * m[7], m[5] * m[6] - m[3] * m[8], m[3] * m[7] - m[4] * m[6],
          m[2] * m[7] - m[1] * m[8], m[0] * m[8] - m[2] * m[6], m[1] * m[6] - m[0] * m[7],
          m[1] * m[5] - m[2] * m[4], m[2] * m[3] - m[0] * m[5], m[0] * m[4] - m[1] * m[3]};
}

std::vector<Vec3> folding_correction(const std::vector<Vec3>& points, const std::vector<float>& det, Dim3 grid,
                                     const Spacing& spacing, double step) {
  check_size(points.size(), grid, "folding_correction");
  check_size(det.size(), grid, "folding_correction (determinants)");
  // Cofactors of every folded interior node, computed once.
  const std::vector<Matrix3> jacobians = node_jacobians(points, grid, spacing);
  std::vector<Matrix3> cof(points.size());
  for_each_node(grid, [&](std::size_t n, int i, int j, int k) {
    if (interior_node(grid, i, j, k) && det[n] <= 0.0f) cof[n] = cofactors(jacobians[n]);
  });
  std::vector<Vec3> out(points.size());
  for_each_node(grid, [&](std::size_t m, int i, int j, int k) {
    Vec3 g{};
    for (int s = 0; s < 27; ++s) {
      const int a = s % 3, b = (s / 3) % 3, c = s / 9;
      const int X = i + 1 - a, Y = j + 1 - b, Z = k + 1 - c;
      if (!interior_node(grid, X, Y, Z)) continue;
      const std::size_t n = grid.index(X, Y, Z);
      if (!(det[n] <= 0.0f)) continue;
      const double w[3] = {first_derivative_weight(0, a, b, c, spacing), first_derivative_weight(1, a, b, c, spacing),
                           first_derivative_weight(2, a, b, c, spacing)};
      for (int comp = 0; comp < 3; ++comp)
        for (int axis = 0; axis < 3; ++axis) g[comp] += cof[n][3 * comp + axis] * w[axis];
    }
    Vec3 p = points[m];
    for (int comp = 0; comp < 3; ++comp) p[comp] += step * g[comp];
    out[m] = p;
  });
  return out;
}

void add_fold_sites(std::vector<Float4>& points, Dim3 grid, const Spacing& spacing, int sites, double amplitude,
                    std::uint64_t seed) {
  check_size(points.size(), grid, "add_fold_sites");
  if (grid.x < 3 || grid.y < 3 || grid.z < 3) return;
  Rng rng(seed, kStreamFoldSites);
  const int radius = 3;  // bumps are Gaussians of width one control point: cut at 3
  for (int site = 0; site < sites; ++site) {
    const double centre[3] = {rng.uniform(1, grid.x - 2), rng.uniform(1, grid.y - 2), rng.uniform(1, grid.z - 2)};
    // A uniform random direction and a size of amplitude +- 30%.
    const double cz = rng.uniform(-1, 1), phi = rng.uniform(0, 6.283185307179586);
    const double sz = std::sqrt(1 - cz * cz);
    const double direction[3] = {sz * std::cos(phi), sz * std::sin(phi), cz};
    const double size = amplitude * rng.uniform(0.7, 1.3);
    const int lo[3] = {static_cast<int>(std::floor(centre[0])) - radius, static_cast<int>(std::floor(centre[1])) - radius,
                       static_cast<int>(std::floor(centre[2])) - radius};
    for (int k = std::max(lo[2], 0); k <= std::min(lo[2] + 2 * radius + 1, grid.z - 1); ++k)
      for (int j = std::max(lo[1], 0); j <= std::min(lo[1] + 2 * radius + 1, grid.y - 1); ++j)
        for (int i = std::max(lo[0], 0); i <= std::min(lo[0] + 2 * radius + 1, grid.x - 1); ++i) {
          const double d2 = (i - centre[0]) * (i - centre[0]) + (j - centre[1]) * (j - centre[1]) +
                            (k - centre[2]) * (k - centre[2]);
          if (d2 > radius * radius) continue;
          const double bump = size * std::exp(-0.5 * d2);
          Float4& p = points[grid.index(i, j, k)];
          p.x = static_cast<float>(p.x + bump * direction[0] * spacing[0]);
          p.y = static_cast<float>(p.y + bump * direction[1] * spacing[1]);
          p.z = static_cast<float>(p.z + bump * direction[2] * spacing[2]);
        }
  }
}

GridWorkload generate_grid_workload(const GeneratorArgs& args, std::uint64_t seed, double default_amplitude) {
  GridWorkload g;
  const Dim3 image = args.dims("dim", Dim3{217, 217, 217});
  g.spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  for (double& s : g.spacing) s = static_cast<float>(s);  // the kernels receive floats
  const double amplitude = args.number("amplitude", default_amplitude, 0.0, 50.0);
  g.grid = control_grid_dims(image, g.spacing);
  g.points = smooth_control_grid(g.grid, amplitude, seed);
  g.workload.variables = {
      {"controlPointDimX", g.grid.x},
      {"controlPointDimY", g.grid.y},
      {"controlPointDimZ", g.grid.z},
      {"controlPointNumber", static_cast<double>(g.grid.voxels())},
      {"interiorNodeNumber", static_cast<double>(interior_node_number(g.grid))},
      {"spacingX", g.spacing[0]},
      {"spacingY", g.spacing[1]},
      {"spacingZ", g.spacing[2]},
  };
  return g;
}

GridVariables read_grid_variables(const fitness::Workload& w, const char* who) {
  GridVariables g;
  g.grid = Dim3{workload_int(w, "controlPointDimX", who), workload_int(w, "controlPointDimY", who),
                workload_int(w, "controlPointDimZ", who)};
  const char* names[3] = {"spacingX", "spacingY", "spacingZ"};
  for (int a = 0; a < 3; ++a) {
    const auto it = w.variables.find(names[a]);
    if (it == w.variables.end())
      throw std::runtime_error(std::string(who) + " reference: no variable '" + names[a] + "'");
    if (!(it->second > 0))
      throw std::runtime_error(std::string(who) + " reference: variable '" + names[a] + "' must be positive");
    g.spacing[a] = it->second;
  }
  if (g.grid.x < 1 || g.grid.y < 1 || g.grid.z < 1)
    throw std::runtime_error(std::string(who) + " reference: the control grid dimensions must be positive");
  return g;
}

}  // namespace gi::seeds::bending
