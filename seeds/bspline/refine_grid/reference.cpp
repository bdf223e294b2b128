// CPU reference and input generator for bspline_refine_grid.
//
// Generator "bspline_coarse_grid": the control grid of a coarse pyramid level
// and the size of the next level's grid. Variables (all optional):
//   coarse: [x, y, z] or n   coarse grid size in nodes (default 40 x 47 x 40:
//                            a 182 x 218 x 182 image at spacing 5)
//   fine: [x, y, z] or n     fine grid size (default 2 coarse - 2 per axis: the
//                            largest control_grid_dims gives a fine image of
//                            n voxels whose coarse level has (n + 1) / 2, at any
//                            spacing; its last node reads a clamped coarse
//                            index). Any size is allowed: beyond 2 coarse - 2,
//                            more fine nodes read clamped indices.
//   amplitude: a             displacement size in coarse voxels (default 3)
//   scale: s                 displacementScale (default 2: the voxel size halves)
// Derived variables: coarseDimX/Y/Z, coarseNodeNumber, fineDimX/Y/Z,
// fineNodeNumber, displacementScale (as the kernel's float sees it).
// Inputs: coarseGrid (float4): smooth random displacements, junk in w in
// [-1000, 1000] (the kernel must neither read w nor pass it on).
#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/rng.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

constexpr std::uint64_t kStreamCoarseJunk = kStreamJunk * 16 + 5;

Workload generate_coarse_grid(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("bspline_coarse_grid", variables, {"coarse", "fine", "amplitude", "scale"});
  const Dim3 coarse = args.dims("coarse", Dim3{40, 47, 40}, 512);
  auto next_level = [](int n) { return n > 1 ? 2 * n - 2 : 1; };
  const Dim3 fine = args.dims("fine", Dim3{next_level(coarse.x), next_level(coarse.y), next_level(coarse.z)}, 1024);
  const double amplitude = args.number("amplitude", 3.0, 0.0, 50.0);
  const double scale = static_cast<float>(args.number("scale", 2.0, -16.0, 16.0));  // the kernel receives a float
  std::vector<Float4> points = smooth_control_grid(coarse, amplitude, seed);
  for (std::size_t n = 0; n < points.size(); ++n)
    points[n].w = static_cast<float>(hash_uniform(seed, kStreamCoarseJunk, n, -1000, 1000));
  Workload w;
  w.variables = {
      {"coarseDimX", coarse.x},
      {"coarseDimY", coarse.y},
      {"coarseDimZ", coarse.z},
      {"coarseNodeNumber", static_cast<double>(coarse.voxels())},
      {"fineDimX", fine.x},
      {"fineDimY", fine.y},
      {"fineDimZ", fine.z},
      {"fineNodeNumber", static_cast<double>(fine.voxels())},
      {"displacementScale", scale},
  };
  w.inputs["coarseGrid"] = to_bytes(points);
  return w;
}

using Field = std::vector<std::array<double, 3>>;

// One axis subdivided: fine node j odd takes the vertex rule around coarse
// node (j + 1) / 2, j even the edge rule between j / 2 and j / 2 + 1, coarse
// indices clamped to the grid. Refining the axes one after another is the
// tensor product of the rules (the kernel's 3-D weights), computed another way.
Field refine_axis(const Field& in, Dim3 dims, int axis, int fine_extent, Dim3& out_dims) {
  out_dims = dims;
  (axis == 0 ? out_dims.x : axis == 1 ? out_dims.y : out_dims.z) = fine_extent;
  const int extent = axis == 0 ? dims.x : axis == 1 ? dims.y : dims.z;
  Field out(out_dims.voxels());
  parallel_for(static_cast<std::size_t>(out_dims.z), [&](std::size_t z0, std::size_t z1) {
    for (int k = static_cast<int>(z0); k < static_cast<int>(z1); ++k)
      for (int j = 0; j < out_dims.y; ++j)
        for (int i = 0; i < out_dims.x; ++i) {
          const int along = axis == 0 ? i : axis == 1 ? j : k;
          auto coarse = [&](int c) -> const std::array<double, 3>& {
            c = std::min(c, extent - 1);
            return in[dims.index(axis == 0 ? c : i, axis == 1 ? c : j, axis == 2 ? c : k)];
          };
          std::array<double, 3>& v = out[out_dims.index(i, j, k)];
          for (int comp = 0; comp < 3; ++comp) {
            const std::size_t d = static_cast<std::size_t>(comp);
            v[d] = along % 2 == 1 ? (coarse((along - 1) / 2)[d] + 6 * coarse((along + 1) / 2)[d] +
                                     coarse((along + 3) / 2)[d]) / 8
                                  : (coarse(along / 2)[d] + coarse(along / 2 + 1)[d]) / 2;
          }
        }
  });
  return out;
}

// Four values per fine node: x, y, z times displacementScale, w = 0.
ReferenceOutputs refine_grid_reference(const Workload& w) {
  const char* who = "bspline_refine_grid";
  const Dim3 coarse{workload_int(w, "coarseDimX", who), workload_int(w, "coarseDimY", who),
                    workload_int(w, "coarseDimZ", who)};
  const Dim3 fine{workload_int(w, "fineDimX", who), workload_int(w, "fineDimY", who),
                  workload_int(w, "fineDimZ", who)};
  const auto scale = w.variables.find("displacementScale");
  if (scale == w.variables.end()) throw std::runtime_error("bspline_refine_grid reference: no variable 'displacementScale'");
  const auto points = from_bytes<Float4>(w.inputs.at("coarseGrid"), "coarseGrid");
  if (points.size() != coarse.voxels() || coarse.voxels() == 0 || fine.voxels() == 0)
    throw std::runtime_error("bspline_refine_grid reference: coarseGrid does not match the grid variables");
  Field field(points.size());
  for (std::size_t n = 0; n < points.size(); ++n) field[n] = {points[n].x, points[n].y, points[n].z};
  Dim3 dims = coarse, next;
  field = refine_axis(field, dims, 0, fine.x, next);
  dims = next;
  field = refine_axis(field, dims, 1, fine.y, next);
  dims = next;
  field = refine_axis(field, dims, 2, fine.z, next);
  std::vector<double> out(4 * field.size());
  for (std::size_t n = 0; n < field.size(); ++n)
    for (std::size_t c = 0; c < 3; ++c) out[4 * n + c] = field[n][c] * scale->second;
  return {{"fineGrid", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("bspline_coarse_grid", generate_coarse_grid);
GI_REGISTER_REFERENCE("bspline_refine_grid", refine_grid_reference);
