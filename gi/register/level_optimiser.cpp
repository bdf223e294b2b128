// The conjugate-gradient optimiser of one pyramid level, its line search and
// folding correction; see level_solver.hpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "gi/register/level_solver.hpp"

namespace gi::reg {

double LevelSolver::max_length(const Buffer& field) {
  scalars_.zero();
  runner_.run("tools/max_vector_length", {{"field", &field}, {"maxLength", &scalars_}},
              with(vars_, {{"vectorNumber", static_cast<double>(nodes_)}}));
  return scalars_.download<float>()[0];
}

// Moves control points until no node's Jacobian determinant is <= 0 (at
// most 20 rounds); returns the rounds that moved the grid.
int LevelSolver::correct_folding() {
  const float inf = std::numeric_limits<float>::infinity();
  int rounds = 0;
  for (; rounds < 20; ++rounds) {
    runner_.run("bspline/jacobian_nodes",
                {{"controlPointGrid", &best_grid_}, {"jacobianMatrices", &jacobian_matrices_},
                 {"jacobianDeterminants", &jacobian_determinants_}},
                vars_);
    scalars_.upload(std::vector<float>{inf, -inf});
    runner_.run("tools/intensity_minmax", {{"image", &jacobian_determinants_}, {"minMax", &scalars_}},
                with(vars_, {{"voxelNumber", static_cast<double>(jacobian_nodes_)}}));
    if (scalars_.download<float>()[0] > 0) break;
    // jacobian_nodes numbers the interior nodes; folding_correction reads
    // determinants by control point. Re-indexing them is data movement only
    // (tens of thousands of values, and only while the grid is folded).
    const std::vector<float> interior = jacobian_determinants_.download<float>();
    std::vector<float> by_node(nodes_, 1.f);
    const int ix = grid_dim_[0] - 2, iy = grid_dim_[1] - 2, iz = grid_dim_[2] - 2;
    for (int z = 0; z < iz; ++z)
      for (int y = 0; y < iy; ++y)
        for (int x = 0; x < ix; ++x)
          by_node[(std::size_t(z + 1) * grid_dim_[1] + y + 1) * grid_dim_[0] + x + 1] =
              interior[(std::size_t(z) * iy + y) * ix + x];
    node_values_.upload(by_node);
    // The determinant's gradient per control point is about 0.1 / spacing per
    // folded neighbour, so this step moves a point a fraction of a voxel.
    runner_.run("bspline/folding_correction",
                {{"controlPointGrid", &best_grid_}, {"jacobianDeterminant", &node_values_},
                 {"correctedGrid", &trial_grid_}},
                with(vars_, {{"step", options_.spacing * options_.spacing / 4}}));
    best_grid_.copy_from(trial_grid_);
  }
  return rounds;
}

std::string LevelSolver::progress_line(int iteration, const Objective& o, double step, double seconds) const {
  char line[320];
  std::snprintf(line, sizeof line,
                "level %d [%dx%dx%d, grid %dx%dx%d] iteration %d: objective %.7f (similarity %.6f, bending %.3g, "
                "log-Jacobian %.3g) step %.3g voxels, %d evaluations, %.2f s",
                options_.levels - level_, dim_[0], dim_[1], dim_[2], grid_dim_[0], grid_dim_[1], grid_dim_[2],
                iteration, o.value, o.similarity, o.bending, o.jacobian, step, evaluations_, seconds);
  return line;
}

void LevelSolver::move_along(const Buffer& from, double alpha, Buffer& to) {
  runner_.run("optimiser/control_point_update",
              {{"bestControlPointGrid", &from}, {"searchDirection", &conjugate_h_}, {"controlPointGrid", &to}},
              with(vars_, {{"alpha", alpha}}));
}

// NiftyReg's line search: steps from the best point so far, growing by 1.1
// after a gain and halving after a loss, at most max_step in all. Returns
// the distance moved (voxels of the largest control-point move).
double LevelSolver::step_niftyreg(double first, double length, double sign, double min_step, double max_step,
                                  Objective& best, bool& state_is_best) {
  double added = 0, step = first;
  for (int trial = 0; trial < options_.line_search_trials && step > min_step && added < max_step; ++trial) {
    // conjugate_h_ is minus the ascent direction (cg_direction_update's
    // convention), scaled so the largest control-point move is `step` voxels.
    move_along(best_grid_, -sign * step / length, trial_grid_);
    const Objective o = evaluate(trial_grid_);
    if (o.value > best.value) {
      best = o;
      best_grid_.copy_from(trial_grid_);
      added += step;
      step = std::min(step * 1.1, max_step - added);
      state_is_best = true;
    } else {
      step *= 0.5;
      state_is_best = false;
    }
  }
  return added;
}

// A line search that brackets the maximum along the direction (doubling
// while the objective rises, halving while it falls) and refines it with
// one parabola through the bracket. Conjugate gradients need the line's
// maximum, not just a gain: with NiftyReg's search Polak-Ribiere directions
// often point downhill and the optimiser keeps restarting. Returns the
// distance moved, 0 when no step of at least min_step gained.
double LevelSolver::step_bracketing(double first, double length, double sign, double min_step, double max_step,
                                    Objective& best, bool& state_is_best) {
  struct Probe {
    double t;
    Objective o;
  };
  int trials = 0;
  double last_t = -1;  // where trial_grid_ and the level's state were last evaluated
  const auto probe = [&](double t) {
    ++trials;
    last_t = t;
    move_along(best_grid_, -sign * t / length, trial_grid_);
    return Probe{t, evaluate(trial_grid_)};
  };
  const Probe start{0, best};
  Probe lower = start;  // the bracket: lower < mid > high in objective
  Probe mid = probe(std::clamp(first, min_step, max_step));
  std::optional<Probe> high;
  if (mid.o.value <= start.o.value) {
    while (true) {
      high = mid;
      if (mid.t / 2 < min_step || trials >= options_.line_search_trials) {
        state_is_best = false;
        return 0;
      }
      mid = probe(mid.t / 2);
      if (mid.o.value > start.o.value) break;
    }
  } else {
    while (mid.t < max_step && trials < options_.line_search_trials) {
      const Probe next = probe(std::min(2 * mid.t, max_step));
      if (next.o.value <= mid.o.value) {
        high = next;
        break;
      }
      lower = mid;
      mid = next;
    }
  }
  if (high && trials < options_.line_search_trials) {
    // The vertex of the parabola through the bracket's three points.
    const double d1 = (mid.o.value - lower.o.value) / (mid.t - lower.t);
    const double d2 = (high->o.value - mid.o.value) / (high->t - mid.t);
    const double curvature = (d2 - d1) / (high->t - lower.t);
    if (curvature < 0) {
      const double vertex = 0.5 * (lower.t + mid.t) - d1 / (2 * curvature);
      if (vertex > lower.t && vertex < high->t && std::fabs(vertex - mid.t) > 0.01 * mid.t) {
        const Probe p = probe(vertex);
        if (p.o.value > mid.o.value) mid = p;
      }
    }
  }
  best = mid.o;
  if (last_t != mid.t) move_along(best_grid_, -sign * mid.t / length, trial_grid_);
  best_grid_.copy_from(trial_grid_);
  state_is_best = last_t == mid.t;
  return mid.t;
}

LevelReport LevelSolver::optimise() {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  LevelReport report;
  report.level = level_;
  report.image_dim = dim_;
  report.grid_dim = grid_dim_;
  // NiftyReg's steps: at most one grid spacing per line search, given up
  // below a hundredth of it.
  const double max_step = options_.spacing, min_step = options_.min_step > 0 ? options_.min_step : max_step / 100;
  // gradient_ points up the objective for NMI and down it for SSD (see
  // gradient()); the steps follow the objective either way.
  const double sign = options_.similarity == Similarity::Nmi ? 1.0 : -1.0;
  report.folding_corrections += correct_folding();
  Objective best = evaluate(best_grid_);
  report.objective_start = best.value;
  bool state_is_best = true;  // the deformation, warped image and histogram are best_grid_'s
  double size = max_step;
  // Steepest ascent first and after a conjugate direction found nothing: with
  // an inexact line search, Polak-Ribiere can point downhill when the
  // gradient grows much between iterations.
  bool restart = true;
  for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
    if (!state_is_best) best = evaluate(best_grid_);
    gradient(best_grid_);
    if (restart) {
      runner_.run("optimiser/cg_init",
                  {{"gradient", &gradient_}, {"conjugateG", &conjugate_g_}, {"conjugateH", &conjugate_h_}}, vars_);
    } else {
      scalars_.zero();
      runner_.run("optimiser/cg_dot_products", {{"gradient", &gradient_}, {"conjugateG", &conjugate_g_}, {"sums", &scalars_}},
                  vars_);
      const std::vector<float> sums = scalars_.download<float>();
      // Polak-Ribiere, restarted (gamma 0) when it turns negative.
      const double gamma = sums[0] > 0 ? std::max(0.0, double(sums[1]) / sums[0]) : 0.0;
      runner_.run("optimiser/cg_direction_update",
                  {{"gradient", &gradient_}, {"conjugateG", &conjugate_g_}, {"conjugateH", &conjugate_h_}},
                  with(vars_, {{"gamma", gamma}}));
    }
    const double length = max_length(conjugate_h_);
    report.iterations = iteration;
    if (!(length > 0)) break;
    const double added = options_.line_search == LineSearch::NiftyReg
                             ? step_niftyreg(size, length, sign, min_step, max_step, best, state_is_best)
                             : step_bracketing(size, length, sign, min_step, max_step, best, state_is_best);
    if (added > 0) {
      const int moved = correct_folding();
      report.folding_corrections += moved;
      if (moved > 0) {
        best = evaluate(best_grid_);
        state_is_best = true;
      }
    }
    if (options_.progress) options_.progress(progress_line(iteration, best, added, elapsed()));
    if (added == 0 && restart) break;  // not even steepest ascent improved: converged
    restart = added == 0;
    if (restart) continue;
    size = std::max(std::min(added, max_step), 2 * min_step);
  }
  report.objective_end = best.value;
  report.evaluations = evaluations_;
  report.seconds = elapsed();
  report.entropy_seconds = entropy_seconds_;
  return report;
}

}  // namespace gi::reg
