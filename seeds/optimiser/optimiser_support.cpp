#include "seeds/optimiser/optimiser_support.hpp"

#include <algorithm>
#include <cmath>

#include "seeds/common/bspline.hpp"
#include "seeds/common/rng.hpp"

namespace gi::seeds {

namespace {

// Seeds of the independent smooth fields of one state.
enum : std::uint64_t { kPrevious = 1, kFresh, kDirection };

std::uint64_t field_seed(std::uint64_t seed, std::uint64_t which) { return hash3(seed, kStreamField * 16 + 9, which); }

}  // namespace

const std::vector<std::string>& cg_variable_names() {
  static const std::vector<std::string> names = {"dim", "spacing", "mask", "amplitude"};
  return names;
}

CgOptions cg_options(const GeneratorArgs& args) {
  CgOptions o;
  o.image = args.dims("dim", Dim3{217, 217, 217});
  o.spacing = args.vec3("spacing", {5, 5, 5}, 1.0, 64.0);
  o.mask = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  o.amplitude = args.number("amplitude", 1.0, 0.0, 1e4);
  return o;
}

std::vector<std::uint8_t> supported_nodes(Dim3 image, const std::array<double, 3>& spacing, Dim3 grid,
                                          const std::vector<std::int32_t>& active) {
  // Cells: the first control point p = floor(x / spacing) of each voxel.
  std::vector<std::uint8_t> cell(grid.voxels(), 0);
  const std::size_t X = static_cast<std::size_t>(image.x), Y = static_cast<std::size_t>(image.y);
  for (const std::int32_t i : active) {
    const auto index = static_cast<std::size_t>(i);
    const int p[3] = {static_cast<int>(std::floor(static_cast<double>(index % X) / spacing[0])),
                      static_cast<int>(std::floor(static_cast<double>((index / X) % Y) / spacing[1])),
                      static_cast<int>(std::floor(static_cast<double>(index / (X * Y)) / spacing[2]))};
    cell[grid.index(std::min(p[0], grid.x - 1), std::min(p[1], grid.y - 1), std::min(p[2], grid.z - 1))] = 1;
  }
  // Node n is influenced by the voxels of cells n - 3 .. n on every axis:
  // a running "any" over 4 cells backwards, one axis at a time.
  const int extent[3] = {grid.x, grid.y, grid.z};
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<std::uint8_t> next(cell.size(), 0);
    for (int k = 0; k < grid.z; ++k)
      for (int j = 0; j < grid.y; ++j)
        for (int i = 0; i < grid.x; ++i) {
          int at[3] = {i, j, k};
          const int self = at[axis];
          std::uint8_t any = 0;
          for (int s = std::max(0, self - 3); s <= self && s < extent[axis]; ++s) {
            at[axis] = s;
            any |= cell[grid.index(at[0], at[1], at[2])];
          }
          next[grid.index(i, j, k)] = any;
        }
    cell.swap(next);
  }
  return cell;
}

CgState cg_state(const CgOptions& o, std::uint64_t seed) {
  CgState s;
  s.grid = control_grid_dims(o.image, o.spacing);
  s.supported = supported_nodes(o.image, o.spacing, s.grid, active_voxels(o.image, o.mask, seed));
  const std::vector<Float4> previous = smooth_control_grid(s.grid, o.amplitude, field_seed(seed, kPrevious));
  const std::vector<Float4> fresh = smooth_control_grid(s.grid, o.amplitude, field_seed(seed, kFresh));
  const std::vector<Float4> older = smooth_control_grid(s.grid, o.amplitude, field_seed(seed, kDirection));
  const std::size_t n = s.grid.voxels();
  s.previous_gradient.resize(n);
  s.gradient.resize(n);
  s.conjugate_g.resize(n);
  s.conjugate_h.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!s.supported[i]) continue;  // zero gradient, zero directions
    const Float4& p = previous[i];
    s.previous_gradient[i] = p;
    s.gradient[i].x = static_cast<float>(0.8 * p.x + 0.6 * fresh[i].x);
    s.gradient[i].y = static_cast<float>(0.8 * p.y + 0.6 * fresh[i].y);
    s.gradient[i].z = static_cast<float>(0.8 * p.z + 0.6 * fresh[i].z);
    s.conjugate_g[i] = Float4{-p.x, -p.y, -p.z, 0.0f};
    // The previous direction: the previous g plus a share of the one before.
    s.conjugate_h[i].x = static_cast<float>(-p.x + 0.4 * older[i].x);
    s.conjugate_h[i].y = static_cast<float>(-p.y + 0.4 * older[i].y);
    s.conjugate_h[i].z = static_cast<float>(-p.z + 0.4 * older[i].z);
  }
  return s;
}

std::array<double, 2> polak_ribiere_sums(const std::vector<Float4>& gradient, const std::vector<Float4>& conjugate_g) {
  std::array<double, 2> sums{0, 0};
  for (std::size_t i = 0; i < gradient.size() && i < conjugate_g.size(); ++i) {
    const Float4& d = gradient[i];
    const Float4& g = conjugate_g[i];
    sums[0] += static_cast<double>(g.x) * g.x + static_cast<double>(g.y) * g.y + static_cast<double>(g.z) * g.z;
    sums[1] += (static_cast<double>(d.x) + g.x) * d.x + (static_cast<double>(d.y) + g.y) * d.y +
               (static_cast<double>(d.z) + g.z) * d.z;
  }
  return sums;
}

fitness::Workload cg_workload(Dim3 grid) {
  fitness::Workload w;
  w.variables = {
      {"controlPointDimX", grid.x},
      {"controlPointDimY", grid.y},
      {"controlPointDimZ", grid.z},
      {"controlPointNumber", static_cast<double>(grid.voxels())},
  };
  return w;
}

}  // namespace gi::seeds
