#pragma once
// The state of a conjugate-gradient optimiser over a B-spline control grid,
// for the optimiser family's generators. The control grid is the one the
// B-spline seeds use for the image (control_grid_dims(image, spacing)).
//
// Gradients look like a registration's: smooth over a few control points
// (smooth_control_grid), zero at control points whose B-spline support holds
// no active voxel (no similarity gradient reaches them), and consecutive
// iterations' gradients correlated (the new gradient is 0.8 times the
// previous one plus 0.6 times a fresh smooth field).
#include <array>
#include <cstdint>
#include <vector>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/generator_args.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds {

struct CgOptions {
  Dim3 image{217, 217, 217};
  std::array<double, 3> spacing{5, 5, 5};
  MaskShape mask = MaskShape::Brain;
  double amplitude = 1;  // typical gradient length
};

// Reads dim (default 217^3), spacing (default 5), mask (default brain) and
// amplitude (default 1).
CgOptions cg_options(const GeneratorArgs& args);
const std::vector<std::string>& cg_variable_names();  // dim, spacing, mask, amplitude

struct CgState {
  Dim3 grid;
  std::vector<std::uint8_t> supported;  // 1 where the node's support holds an active voxel
  std::vector<Float4> previous_gradient;
  std::vector<Float4> gradient;     // this iteration's gradient
  std::vector<Float4> conjugate_g;  // g = -previous_gradient
  std::vector<Float4> conjugate_h;  // the previous search direction
};

// Deterministic per seed; every w is 0.
CgState cg_state(const CgOptions& options, std::uint64_t seed);

// Control points whose B-spline support (the 4 x 4 x 4 cells around them)
// holds at least one active voxel.
std::vector<std::uint8_t> supported_nodes(Dim3 image, const std::array<double, 3>& spacing, Dim3 grid,
                                          const std::vector<std::int32_t>& active);

// The two Polak-Ribiere sums in double of the float arrays:
// [0] = sum g.g, [1] = sum (gradient + g).gradient (x, y, z only).
std::array<double, 2> polak_ribiere_sums(const std::vector<Float4>& gradient, const std::vector<Float4>& conjugate_g);

// Variables controlPointDimX/Y/Z and controlPointNumber of a workload.
fitness::Workload cg_workload(Dim3 grid);

}  // namespace gi::seeds
