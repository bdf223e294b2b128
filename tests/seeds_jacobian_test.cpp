// The Jacobian seeds of the B-spline family (jacobian_nodes, jacobian_voxels,
// log_jacobian_penalty, log_jacobian_gradient_approx,
// log_jacobian_gradient_exact): analytic cases of their CPU references,
// finite-difference checks of the gradients, the generators, and float
// emulations of the kernels that must pass the specs' tolerances.
//
// The float-vs-double errors recorded in the specs' tolerance notes come from
//   gi_tests --gtest_also_run_disabled_tests --gtest_filter='SeedsJacobian*Measure*'
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "seeds/bspline/jacobian_support.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/bspline.hpp"
#include "seeds/common/volume.hpp"
#include "training_checks.hpp"

namespace {

namespace fs = std::filesystem;
namespace jac = gi::seeds::jacobian;
using namespace gi::fitness;
using gi::seeds::Dim3;
using gi::seeds::Float4;
using gi::seeds::from_bytes;
using gi::seeds::to_bytes;
using gi::test::training_check;
using nlohmann::json;

const fs::path kSeeds = fs::path(GI_SOURCE_DIR) / "seeds";

KernelSpec spec_of(const std::string& kernel) { return load_kernel_spec(kSeeds / "bspline" / kernel); }

Workload generate(const char* generator, const json& variables, std::uint64_t seed) {
  return find_generator(generator)(variables, seed);
}

int ivar(const Workload& w, const char* name) { return static_cast<int>(w.variables.at(name)); }
Dim3 grid_dims(const Workload& w) {
  return Dim3{ivar(w, "controlPointDimX"), ivar(w, "controlPointDimY"), ivar(w, "controlPointDimZ")};
}
Dim3 image_dims(const Workload& w) { return Dim3{ivar(w, "imageDimX"), ivar(w, "imageDimY"), ivar(w, "imageDimZ")}; }
jac::Spacing spacing_of(const Workload& w) {
  return {w.variables.at("spacingX"), w.variables.at("spacingY"), w.variables.at("spacingZ")};
}

// Control points displaced by A times their own position: the deformation is
// the affine map x -> (I + A) x everywhere (cubic B-splines reproduce linear
// functions), so every Jacobian is I + A.
constexpr double kAffine[9] = {0.12, -0.05, 0.03, 0.02, -0.08, 0.06, -0.04, 0.07, 0.1};

std::vector<Float4> affine_grid(Dim3 grid, const jac::Spacing& spacing) {
  std::vector<Float4> points(grid.voxels());
  for (int k = 0; k < grid.z; ++k)
    for (int j = 0; j < grid.y; ++j)
      for (int i = 0; i < grid.x; ++i) {
        const double q[3] = {(i - 1) * spacing[0], (j - 1) * spacing[1], (k - 1) * spacing[2]};
        double d[3];
        for (int r = 0; r < 3; ++r) d[r] = kAffine[3 * r] * q[0] + kAffine[3 * r + 1] * q[1] + kAffine[3 * r + 2] * q[2];
        points[grid.index(i, j, k)] = Float4{static_cast<float>(d[0]), static_cast<float>(d[1]), static_cast<float>(d[2]), 0};
      }
  return points;
}

jac::Matrix identity_plus_affine() {
  jac::Matrix m;
  for (std::size_t i = 0; i < 9; ++i) m[i] = kAffine[i] + (i % 4 == 0 ? 1.0 : 0.0);
  return m;
}

// ------------------------------------------------------------ float emulation
// The kernels' arithmetic in float, statement by statement; Fma models the GPU
// compiler contracting a multiply-add (it does by default). Both must pass.

template <bool Fma>
float mad(float a, float b, float c) {
  if constexpr (Fma) return std::fma(a, b, c);
  else return a * b + c;
}

template <bool Fma>
float det_f(const float* j) {
  // determinant = j0 * (j4 j8 - j5 j7); -= j1 * (...); += j2 * (...)
  float d = j[0] * (j[4] * j[8] - j[5] * j[7]);
  d = d - j[1] * (j[3] * j[8] - j[5] * j[6]);
  d = mad<Fma>(j[2], j[3] * j[7] - j[4] * j[6], d);
  return d;
}

template <bool Fma>
void node_jacobian_f(const std::vector<Float4>& grid, Dim3 g, const float s[3], int x, int y, int z, float* jac) {
  const float basis[3] = {1.0f / 6.0f, 4.0f / 6.0f, 1.0f / 6.0f};
  const float derivative[3] = {-0.5f, 0.0f, 0.5f};
  for (int i = 0; i < 9; i++) jac[i] = 0.0f;
  for (int c = 0; c < 3; c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 3; a++) {
        const Float4& p = grid[g.index(x + a - 1, y + b - 1, z + c - 1)];
        const float wx = derivative[a] * basis[b] * basis[c] / s[0];
        const float wy = basis[a] * derivative[b] * basis[c] / s[1];
        const float wz = basis[a] * basis[b] * derivative[c] / s[2];
        const float d[3] = {p.x, p.y, p.z};
        for (int r = 0; r < 3; r++) {
          jac[3 * r + 0] = mad<Fma>(wx, d[r], jac[3 * r + 0]);
          jac[3 * r + 1] = mad<Fma>(wy, d[r], jac[3 * r + 1]);
          jac[3 * r + 2] = mad<Fma>(wz, d[r], jac[3 * r + 2]);
        }
      }
  jac[0] += 1.0f;
  jac[4] += 1.0f;
  jac[8] += 1.0f;
}

void float_spacing(const Workload& w, float s[3]) {
  s[0] = static_cast<float>(w.variables.at("spacingX"));
  s[1] = static_cast<float>(w.variables.at("spacingY"));
  s[2] = static_cast<float>(w.variables.at("spacingZ"));
}

// Outputs by buffer name, float values (components flattened).
using FloatOutputs = std::map<std::string, std::vector<float>>;

template <bool Fma>
FloatOutputs emulate_nodes(const Workload& w, bool penalty_only) {
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  const Dim3 g = grid_dims(w), n = jac::interior_nodes(g);
  float s[3];
  float_spacing(w, s);
  std::vector<float> matrices(9 * n.voxels()), dets(n.voxels()), penalty(n.voxels());
  gi::seeds::parallel_for(n.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int x = static_cast<int>(t % static_cast<std::size_t>(n.x)) + 1;
      const int y = static_cast<int>((t / static_cast<std::size_t>(n.x)) % static_cast<std::size_t>(n.y)) + 1;
      const int z = static_cast<int>(t / (static_cast<std::size_t>(n.x) * static_cast<std::size_t>(n.y))) + 1;
      float j[9];
      node_jacobian_f<Fma>(grid, g, s, x, y, z, j);
      const float d = det_f<Fma>(j);
      for (int i = 0; i < 9; i++) matrices[9 * t + static_cast<std::size_t>(i)] = j[i];
      dets[t] = d;
      if (d > 0.0f) {
        const float l = std::log(d);
        penalty[t] = l * l;
      } else {
        penalty[t] = 1000.0f;
      }
    }
  });
  if (penalty_only) return {{"penalty", penalty}};
  return {{"jacobianMatrices", matrices}, {"jacobianDeterminants", dets}};
}

void basis_derivative_f(float u, float* basis, float* derivative) {
  const float u2 = u * u;
  const float u3 = u2 * u;
  const float v = 1.0f - u;
  basis[0] = v * v * v / 6.0f;
  basis[1] = (3.0f * u3 - 6.0f * u2 + 4.0f) / 6.0f;
  basis[2] = (-3.0f * u3 + 3.0f * u2 + 3.0f * u + 1.0f) / 6.0f;
  basis[3] = u3 / 6.0f;
  derivative[0] = -0.5f * v * v;
  derivative[1] = 1.5f * u2 - 2.0f * u;
  derivative[2] = -1.5f * u2 + u + 0.5f;
  derivative[3] = 0.5f * u2;
}

template <bool Fma>
FloatOutputs emulate_voxels(const Workload& w) {
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  const Dim3 g = grid_dims(w), image = image_dims(w);
  float s[3];
  float_spacing(w, s);
  std::vector<float> dets(active.size());
  gi::seeds::parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      int index = active[t];
      const int z = index / (image.x * image.y);
      index = index - z * image.x * image.y;
      const int y = index / image.x;
      const int x = index - y * image.x;
      const float grid_pos[3] = {static_cast<float>(x) / s[0], static_cast<float>(y) / s[1], static_cast<float>(z) / s[2]};
      int pre[3];
      float basis[3][4], derivative[3][4];
      for (int a = 0; a < 3; a++) {
        pre[a] = static_cast<int>(std::floor(grid_pos[a]));
        basis_derivative_f(grid_pos[a] - static_cast<float>(pre[a]), basis[a], derivative[a]);
      }
      float j[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
      for (int c = 0; c < 4; c++)
        for (int b = 0; b < 4; b++)
          for (int a = 0; a < 4; a++) {
            const Float4& p = grid[g.index(pre[0] + a, pre[1] + b, pre[2] + c)];
            const float wx = derivative[0][a] * basis[1][b] * basis[2][c];
            const float wy = basis[0][a] * derivative[1][b] * basis[2][c];
            const float wz = basis[0][a] * basis[1][b] * derivative[2][c];
            const float d[3] = {p.x, p.y, p.z};
            for (int r = 0; r < 3; r++) {
              j[3 * r + 0] = mad<Fma>(wx, d[r], j[3 * r + 0]);
              j[3 * r + 1] = mad<Fma>(wy, d[r], j[3 * r + 1]);
              j[3 * r + 2] = mad<Fma>(wz, d[r], j[3 * r + 2]);
            }
          }
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) j[3 * r + c] = (r == c ? 1.0f : 0.0f) + j[3 * r + c] / s[c];
      dets[t] = det_f<Fma>(j);
    }
  });
  return {{"jacobianDeterminants", dets}};
}

template <bool Fma>
FloatOutputs emulate_gradient_approx(const Workload& w) {
  const auto m = from_bytes<float>(w.inputs.at("jacobianMatrices"), "matrices");
  const Dim3 g = grid_dims(w);
  float s[3];
  float_spacing(w, s);
  const float basis[3] = {1.0f / 6.0f, 4.0f / 6.0f, 1.0f / 6.0f};
  const float derivative[3] = {-0.5f, 0.0f, 0.5f};
  std::vector<float> out(4 * g.voxels());
  gi::seeds::parallel_for(g.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int x = static_cast<int>(t % static_cast<std::size_t>(g.x));
      const int y = static_cast<int>((t / static_cast<std::size_t>(g.x)) % static_cast<std::size_t>(g.y));
      const int z = static_cast<int>(t / (static_cast<std::size_t>(g.x) * static_cast<std::size_t>(g.y)));
      float grad[3] = {0.0f, 0.0f, 0.0f};
      for (int c = 0; c < 3; c++)
        for (int b = 0; b < 3; b++)
          for (int a = 0; a < 3; a++) {
            const int nx = x + 1 - a, ny = y + 1 - b, nz = z + 1 - c;
            if (nx < 1 || nx > g.x - 2 || ny < 1 || ny > g.y - 2 || nz < 1 || nz > g.z - 2) continue;
            const float* j = m.data() + 9 * static_cast<std::size_t>(((nz - 1) * (g.y - 2) + ny - 1) * (g.x - 2) + nx - 1);
            const float cof[9] = {j[4] * j[8] - j[5] * j[7], j[5] * j[6] - j[3] * j[8], j[3] * j[7] - j[4] * j[6],
                                  j[2] * j[7] - j[1] * j[8], j[0] * j[8] - j[2] * j[6], j[1] * j[6] - j[0] * j[7],
                                  j[1] * j[5] - j[2] * j[4], j[2] * j[3] - j[0] * j[5], j[0] * j[4] - j[1] * j[3]};
            const float det = mad<Fma>(j[2], cof[2], mad<Fma>(j[1], cof[1], j[0] * cof[0]));
            if (!(det > 0.0f)) continue;
            const float scale = 2.0f * std::log(det) / det;
            const float wx = derivative[a] * basis[b] * basis[c] / s[0];
            const float wy = basis[a] * derivative[b] * basis[c] / s[1];
            const float wz = basis[a] * basis[b] * derivative[c] / s[2];
            for (int r = 0; r < 3; r++)
              grad[r] = mad<Fma>(scale, mad<Fma>(cof[3 * r + 2], wz, mad<Fma>(cof[3 * r + 1], wy, cof[3 * r] * wx)), grad[r]);
          }
      for (int r = 0; r < 3; r++) out[4 * t + static_cast<std::size_t>(r)] = grad[r];
      out[4 * t + 3] = 0.0f;
    }
  });
  return {{"gradient", out}};
}

template <bool Fma>
FloatOutputs emulate_gradient_exact(const Workload& w) {
  const auto terms = from_bytes<float>(w.inputs.at("voxelTerms"), "terms");
  const auto map = from_bytes<std::int32_t>(w.inputs.at("voxelToActive"), "map");
  const Dim3 g = grid_dims(w), image = image_dims(w);
  float s[3];
  float_spacing(w, s);
  std::vector<float> out(4 * g.voxels());
  gi::seeds::parallel_for(g.voxels(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int cp[3] = {static_cast<int>(t % static_cast<std::size_t>(g.x)),
                         static_cast<int>((t / static_cast<std::size_t>(g.x)) % static_cast<std::size_t>(g.y)),
                         static_cast<int>(t / (static_cast<std::size_t>(g.x) * static_cast<std::size_t>(g.y)))};
      const int dims[3] = {image.x, image.y, image.z};
      int first[3], last[3];
      for (int a = 0; a < 3; a++) {
        first[a] = std::max(0, static_cast<int>(std::floor(static_cast<float>(cp[a] - 3) * s[a])));
        last[a] = std::min(dims[a] - 1, static_cast<int>(std::ceil(static_cast<float>(cp[a] + 1) * s[a])));
      }
      float grad[3] = {0.0f, 0.0f, 0.0f};
      float basis[3][4], derivative[3][4];
      for (int vz = first[2]; vz <= last[2]; vz++) {
        const float gz = static_cast<float>(vz) / s[2];
        const int zPre = static_cast<int>(std::floor(gz));
        const int oz = cp[2] - zPre;
        if (oz < 0 || oz > 3) continue;
        basis_derivative_f(gz - static_cast<float>(zPre), basis[2], derivative[2]);
        for (int vy = first[1]; vy <= last[1]; vy++) {
          const float gy = static_cast<float>(vy) / s[1];
          const int yPre = static_cast<int>(std::floor(gy));
          const int oy = cp[1] - yPre;
          if (oy < 0 || oy > 3) continue;
          basis_derivative_f(gy - static_cast<float>(yPre), basis[1], derivative[1]);
          for (int vx = first[0]; vx <= last[0]; vx++) {
            const float gx = static_cast<float>(vx) / s[0];
            const int xPre = static_cast<int>(std::floor(gx));
            const int ox = cp[0] - xPre;
            const int active = map[image.index(vx, vy, vz)];
            if (ox < 0 || ox > 3 || active < 0) continue;
            basis_derivative_f(gx - static_cast<float>(xPre), basis[0], derivative[0]);
            const float wx = derivative[0][ox] * basis[1][oy] * basis[2][oz] / s[0];
            const float wy = basis[0][ox] * derivative[1][oy] * basis[2][oz] / s[1];
            const float wz = basis[0][ox] * basis[1][oy] * derivative[2][oz] / s[2];
            const float* T = terms.data() + 9 * static_cast<std::size_t>(active);
            for (int r = 0; r < 3; r++)
              grad[r] = grad[r] + mad<Fma>(T[3 * r + 2], wz, mad<Fma>(T[3 * r + 1], wy, T[3 * r] * wx));
          }
        }
      }
      for (int r = 0; r < 3; r++) out[4 * t + static_cast<std::size_t>(r)] = grad[r];
      out[4 * t + 3] = 0.0f;
    }
  });
  return {{"gradient", out}};
}

FloatOutputs emulate(const std::string& entry, const Workload& w, bool fma) {
  if (entry == "bspline_jacobian_nodes") return fma ? emulate_nodes<true>(w, false) : emulate_nodes<false>(w, false);
  if (entry == "bspline_log_jacobian_penalty") return fma ? emulate_nodes<true>(w, true) : emulate_nodes<false>(w, true);
  if (entry == "bspline_jacobian_voxels") return fma ? emulate_voxels<true>(w) : emulate_voxels<false>(w);
  if (entry == "bspline_log_jacobian_gradient_approx")
    return fma ? emulate_gradient_approx<true>(w) : emulate_gradient_approx<false>(w);
  if (entry == "bspline_log_jacobian_gradient_exact")
    return fma ? emulate_gradient_exact<true>(w) : emulate_gradient_exact<false>(w);
  throw std::runtime_error("no emulation for " + entry);
}

struct ErrorStats {
  double max_abs = 0, max_rel = 0, largest_reference = 0;
  double worst_fraction = 0;  // largest error / allowed error: 1 / the safety margin
  std::size_t values = 0, failures = 0;
  std::size_t nonzero = 0;  // values whose reference is not 0
  std::string first_failure;
};

// The checker's rule over every output: |got - ref| <= abs + rel * |ref|, NaN fails.
ErrorStats compare(const FloatOutputs& got, const std::vector<ExpectedOutput>& expected, const Tolerance& tol) {
  ErrorStats s;
  for (const ExpectedOutput& e : expected) {
    const std::vector<float>& values = got.at(e.buffer);
    EXPECT_EQ(values.size(), e.values.size()) << e.buffer;
    for (std::size_t i = 0; i < e.values.size() && i < values.size(); ++i) {
      const double ref = e.values[i], err = std::fabs(values[i] - ref);
      ++s.values;
      s.nonzero += ref != 0 ? 1 : 0;
      s.max_abs = std::max(s.max_abs, err);
      s.largest_reference = std::max(s.largest_reference, std::fabs(ref));
      if (ref != 0) s.max_rel = std::max(s.max_rel, err / std::fabs(ref));
      s.worst_fraction = std::max(s.worst_fraction, err / (tol.abs + tol.rel * std::fabs(ref)));
      if (!(err <= tol.abs + tol.rel * std::fabs(ref)) && s.failures++ == 0)
        s.first_failure = e.buffer + "[" + std::to_string(i) + "]: got " + std::to_string(values[i]) + ", expected " +
                          std::to_string(ref);
    }
  }
  return s;
}

const std::vector<std::string> kKernels = {"jacobian_nodes", "jacobian_voxels", "log_jacobian_penalty",
                                           "log_jacobian_gradient_approx", "log_jacobian_gradient_exact"};

// --------------------------------------------------------- jacobian_nodes

TEST(SeedsJacobianNodes, AffineDisplacementGivesIPlusAAtEveryNode) {
  Workload w = generate("jacobian_grid", {{"dim", {23, 19, 17}}, {"spacing", {5, 4, 7.5}}}, 1);
  w.inputs["controlPointGrid"] = to_bytes(affine_grid(grid_dims(w), spacing_of(w)));
  const auto out = find_reference("bspline_jacobian_nodes")(w);
  const auto& m = out.at("jacobianMatrices");
  const auto& d = out.at("jacobianDeterminants");
  const std::size_t nodes = jac::interior_nodes(grid_dims(w)).voxels();
  ASSERT_EQ(w.variables.at("jacobianNodeNumber"), static_cast<double>(nodes));
  ASSERT_EQ(m.size(), 9 * nodes);
  ASSERT_EQ(d.size(), nodes);
  const jac::Matrix expected = identity_plus_affine();
  for (std::size_t n = 0; n < nodes; ++n) {
    for (std::size_t i = 0; i < 9; ++i) ASSERT_NEAR(m[9 * n + i], expected[i], 1e-6) << n << " " << i;
    ASSERT_NEAR(d[n], jac::determinant(expected), 1e-6);
  }
  EXPECT_NEAR(jac::determinant(expected), 1.12 * 0.92 * 1.1, 0.02);  // near the diagonal product, not 1
}

TEST(SeedsJacobianNodes, ZeroDisplacementGivesIdentityAndDeterminantOne) {
  const Workload w = generate("jacobian_grid", {{"dim", {20, 16, 12}}, {"spacing", 4}, {"amplitude", 0}}, 2);
  const auto out = find_reference("bspline_jacobian_nodes")(w);
  for (std::size_t i = 0; i < out.at("jacobianMatrices").size(); ++i)
    ASSERT_EQ(out.at("jacobianMatrices")[i], i % 9 % 4 == 0 ? 1.0 : 0.0);
  for (const double d : out.at("jacobianDeterminants")) ASSERT_EQ(d, 1.0);
}

// The node stencil is the voxel Jacobian at the voxel where u = 0: both
// references must agree there for a random grid.
TEST(SeedsJacobianNodes, NodeStencilEqualsTheExactJacobianAtTheNodesVoxel) {
  const Workload w = generate("jacobian_grid", {{"dim", {21, 26, 17}}, {"spacing", {5, 5, 4}}, {"amplitude", 3}}, 3);
  const Dim3 g = grid_dims(w), image = image_dims(w), n = jac::interior_nodes(g);
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  const auto nodes = jac::node_jacobians(grid, g, spacing_of(w));
  std::vector<std::int32_t> active;
  std::vector<std::size_t> node_of;
  for (int k = 0; k < n.z; ++k)
    for (int j = 0; j < n.y; ++j)
      for (int i = 0; i < n.x; ++i) {
        const int x = 5 * i, y = 5 * j, z = 4 * k;
        if (x >= image.x || y >= image.y || z >= image.z) continue;
        active.push_back(static_cast<std::int32_t>(image.index(x, y, z)));
        node_of.push_back(n.index(i, j, k));
      }
  ASSERT_GT(active.size(), 50u);
  const auto voxels = jac::voxel_jacobians(grid, g, image, spacing_of(w), active);
  double largest = 0;
  for (std::size_t t = 0; t < active.size(); ++t)
    for (std::size_t i = 0; i < 9; ++i) {
      ASSERT_NEAR(voxels[t][i], nodes[node_of[t]][i], 1e-12);
      largest = std::max(largest, std::fabs(voxels[t][i] - (i % 4 == 0 ? 1.0 : 0.0)));
    }
  EXPECT_GT(largest, 0.05);  // a real deformation, not the identity
}

// --------------------------------------------------------- jacobian_voxels

TEST(SeedsJacobianVoxels, AffineDisplacementGivesDetOfIPlusAAtEveryVoxel) {
  Workload w = generate("bspline_brain", {{"dim", {20, 16, 12}}, {"spacing", {5, 4, 2.5}}, {"mask", "full"}}, 3);
  w.inputs["controlPointGrid"] = to_bytes(affine_grid(grid_dims(w), spacing_of(w)));
  const auto d = find_reference("bspline_jacobian_voxels")(w).at("jacobianDeterminants");
  ASSERT_EQ(d.size(), 20u * 16u * 12u);
  const double expected = jac::determinant(identity_plus_affine());
  for (const double v : d) ASSERT_NEAR(v, expected, 1e-6);
  // and the full matrices, through the support function
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "active");
  const auto m = jac::voxel_jacobians(from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid"), grid_dims(w),
                                      image_dims(w), spacing_of(w), active);
  for (const auto& matrix : m)
    for (std::size_t i = 0; i < 9; ++i) ASSERT_NEAR(matrix[i], identity_plus_affine()[i], 1e-6);
}

TEST(SeedsJacobianVoxels, ZeroDisplacementGivesDeterminantOne) {
  const Workload w = generate("bspline_brain", {{"dim", {23, 19, 17}}, {"spacing", 3.3}, {"amplitude", 0}, {"mask", "brain"}}, 4);
  const auto d = find_reference("bspline_jacobian_voxels")(w).at("jacobianDeterminants");
  ASSERT_FALSE(d.empty());
  for (const double v : d) ASSERT_EQ(v, 1.0);
}

// The exact Jacobian is the derivative of the deformation the
// deformation-field reference computes: compare with central differences.
TEST(SeedsJacobianVoxels, DeterminantMatchesFiniteDifferencesOfTheDeformation) {
  const Workload w = generate("bspline_brain", {{"dim", {30, 26, 22}}, {"spacing", 5}, {"amplitude", 4}, {"mask", "full"}}, 5);
  const Dim3 image = image_dims(w);
  const auto grid = from_bytes<Float4>(w.inputs.at("controlPointGrid"), "grid");
  // The displacement as a continuous function of position (voxel units).
  auto displacement = [&](const double p[3], double out[3]) {
    int pre[3];
    double b[3][4];
    for (int a = 0; a < 3; ++a) {
      const double gpos = p[a] / spacing_of(w)[static_cast<std::size_t>(a)];
      pre[a] = static_cast<int>(std::floor(gpos));
      gi::seeds::bspline_basis(gpos - pre[a], b[a]);
    }
    out[0] = out[1] = out[2] = 0;
    for (int c = 0; c < 4; ++c)
      for (int bb = 0; bb < 4; ++bb)
        for (int a = 0; a < 4; ++a) {
          const Float4& q = grid[grid_dims(w).index(pre[0] + a, pre[1] + bb, pre[2] + c)];
          const double wgt = b[0][a] * b[1][bb] * b[2][c];
          out[0] += wgt * q.x;
          out[1] += wgt * q.y;
          out[2] += wgt * q.z;
        }
  };
  const auto det = find_reference("bspline_jacobian_voxels")(w).at("jacobianDeterminants");
  const double h = 1e-4;
  int checked = 0;
  for (int z = 3; z < image.z - 3; z += 4)
    for (int y = 3; y < image.y - 3; y += 5)
      for (int x = 3; x < image.x - 3; x += 3) {
        jac::Matrix m;
        for (int c = 0; c < 3; ++c) {
          double p[3] = {x + 0.0, y + 0.0, z + 0.0}, q[3] = {x + 0.0, y + 0.0, z + 0.0}, dp[3], dq[3];
          p[c] += h;
          q[c] -= h;
          displacement(p, dp);
          displacement(q, dq);
          for (int r = 0; r < 3; ++r) m[static_cast<std::size_t>(3 * r + c)] = (r == c ? 1.0 : 0.0) + (dp[r] - dq[r]) / (2 * h);
        }
        ASSERT_NEAR(det[image.index(x, y, z)], jac::determinant(m), 1e-6) << x << " " << y << " " << z;
        ++checked;
      }
  EXPECT_GT(checked, 50);
}

// ------------------------------------------------------ log_jacobian_penalty

TEST(SeedsJacobianPenalty, ZeroDisplacementGivesZeroAndAffineGivesLogDetSquared) {
  Workload w = generate("jacobian_grid", {{"dim", {20, 16, 12}}, {"spacing", 4}, {"amplitude", 0}}, 2);
  const auto zero = find_reference("bspline_log_jacobian_penalty")(w).at("penalty");
  ASSERT_FALSE(zero.empty());
  for (const double p : zero) ASSERT_EQ(p, 0.0);
  w.inputs["controlPointGrid"] = to_bytes(affine_grid(grid_dims(w), spacing_of(w)));
  const double l = std::log(jac::determinant(identity_plus_affine()));
  const auto penalty = find_reference("bspline_log_jacobian_penalty")(w).at("penalty");
  ASSERT_EQ(penalty.size(), jac::interior_nodes(grid_dims(w)).voxels());
  for (const double p : penalty) ASSERT_NEAR(p, l * l, 1e-6);
  EXPECT_GT(l * l, 1e-3);
}

TEST(SeedsJacobianPenalty, FoldedNodesCountTheFoldConstant) {
  // A mirror image in x (control points displaced by -2 x) folds everywhere.
  Workload w = generate("jacobian_grid", {{"dim", {16, 16, 16}}, {"spacing", 4}}, 1);
  auto grid = affine_grid(grid_dims(w), spacing_of(w));
  const Dim3 g = grid_dims(w);
  for (int k = 0; k < g.z; ++k)
    for (int j = 0; j < g.y; ++j)
      for (int i = 0; i < g.x; ++i) grid[g.index(i, j, k)] = Float4{-2.0f * 4.0f * (i - 1), 0, 0, 0};
  w.inputs["controlPointGrid"] = to_bytes(grid);
  const auto penalty = find_reference("bspline_log_jacobian_penalty")(w).at("penalty");
  ASSERT_FALSE(penalty.empty());
  for (const double p : penalty) ASSERT_EQ(p, jac::kFoldPenalty);
  EXPECT_EQ(jac::log_jacobian_penalty(jac::Matrix{0, 0, 0, 0, 1, 0, 0, 0, 1}), jac::kFoldPenalty);  // det 0 folds
  EXPECT_EQ(jac::log_jacobian_term(jac::Matrix{-1, 0, 0, 0, 1, 0, 0, 0, 1}), jac::Matrix{});
}

TEST(SeedsJacobianPenalty, GeneratorFoldsGiveFoldedNodesAwayFromZero) {
  const Workload w = generate("jacobian_grid", {{"dim", {60, 56, 52}}, {"spacing", 4}, {"amplitude", 2}, {"folds", 3}}, 7);
  const auto d = find_reference("bspline_jacobian_nodes")(w).at("jacobianDeterminants");
  std::size_t folded = 0;
  double closest = 1e9;
  for (const double v : d) {
    folded += v <= 0 ? 1 : 0;
    closest = std::min(closest, std::fabs(v));
  }
  EXPECT_GT(folded, 3u);
  EXPECT_LT(folded, d.size() / 20);  // local folds, not a mirrored volume
  EXPECT_GE(closest, jac::kNodeMargin);
  const auto p = find_reference("bspline_log_jacobian_penalty")(w).at("penalty");
  EXPECT_EQ(static_cast<std::size_t>(std::count(p.begin(), p.end(), jac::kFoldPenalty)), folded);
}

// --------------------------------------------------------------- gradients

// Sum over interior nodes of (ln det)^2 (folds excluded: their penalty is flat).
double node_penalty_sum(const std::vector<Float4>& grid, Dim3 g, const jac::Spacing& s) {
  double sum = 0;
  for (const auto& m : jac::node_jacobians(grid, g, s)) {
    const double d = jac::determinant(m);
    if (d > 0) sum += std::log(d) * std::log(d);
  }
  return sum;
}

double voxel_penalty_sum(const std::vector<Float4>& grid, Dim3 g, Dim3 image, const jac::Spacing& s,
                         const std::vector<std::int32_t>& active) {
  double sum = 0;
  for (const auto& m : jac::voxel_jacobians(grid, g, image, s, active)) {
    const double d = jac::determinant(m);
    if (d > 0) sum += std::log(d) * std::log(d);
  }
  return sum;
}

// Central differences of `penalty` in every component of every control point
// against `gradient` (4 per point). Control points are floats, so the step is
// applied in float and the actual step is used. The relative part covers the
// truncation error next to folds (ln det changes fast where det is small).
void expect_gradient_matches_finite_differences(std::vector<Float4> grid, const std::vector<double>& gradient,
                                                const std::function<double(const std::vector<Float4>&)>& penalty,
                                                double tolerance, double relative) {
  ASSERT_EQ(gradient.size(), 4 * grid.size());
  double largest = 0;
  for (std::size_t m = 0; m < grid.size(); ++m) {
    float* c[3] = {&grid[m].x, &grid[m].y, &grid[m].z};
    for (int r = 0; r < 3; ++r) {
      const float original = *c[r];
      const float up = original + 1e-3f, down = original - 1e-3f;
      *c[r] = up;
      const double pu = penalty(grid);
      *c[r] = down;
      const double pd = penalty(grid);
      *c[r] = original;
      const double fd = (pu - pd) / (static_cast<double>(up) - static_cast<double>(down));
      largest = std::max(largest, std::fabs(fd));
      ASSERT_NEAR(gradient[4 * m + static_cast<std::size_t>(r)], fd, tolerance + relative * std::fabs(fd))
          << "control point " << m << " component " << r;
    }
    ASSERT_EQ(gradient[4 * m + 3], 0.0);
  }
  EXPECT_GT(largest, 100 * tolerance);  // the gradient is not trivially zero
}

TEST(SeedsJacobianGradientApprox, MatchesFiniteDifferencesOfTheNodePenalty) {
  const json v = {{"dim", {14, 12, 11}}, {"spacing", {4, 3.5, 5}}, {"amplitude", 1.5}, {"folds", 1}};
  const Workload grid_w = generate("jacobian_grid", v, 9);
  const Workload w = generate("jacobian_node_matrices", v, 9);
  EXPECT_EQ(grid_w.variables, w.variables);
  const auto grid = from_bytes<Float4>(grid_w.inputs.at("controlPointGrid"), "grid");
  const Dim3 g = grid_dims(w);
  const jac::Spacing s = spacing_of(w);
  // The generator's matrices are the node Jacobians of the same grid, as floats.
  const auto matrices = from_bytes<float>(w.inputs.at("jacobianMatrices"), "matrices");
  const auto nodes = jac::node_jacobians(grid, g, s);
  ASSERT_EQ(matrices.size(), 9 * nodes.size());
  std::size_t folded = 0;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    folded += jac::determinant(nodes[n]) <= 0 ? 1 : 0;
    for (std::size_t i = 0; i < 9; ++i) ASSERT_EQ(matrices[9 * n + i], static_cast<float>(nodes[n][i]));
  }
  EXPECT_GT(folded, 0u);  // the fold path is exercised
  const auto gradient = find_reference("bspline_log_jacobian_gradient_approx")(w).at("gradient");
  expect_gradient_matches_finite_differences(
      grid, gradient, [&](const std::vector<Float4>& p) { return node_penalty_sum(p, g, s); }, 1e-5, 1e-4);
}

TEST(SeedsJacobianGradientApprox, ZeroDisplacementGivesZeroGradient) {
  const Workload w = generate("jacobian_node_matrices", {{"dim", {20, 16, 12}}, {"spacing", 4}, {"amplitude", 0}}, 1);
  const auto gradient = find_reference("bspline_log_jacobian_gradient_approx")(w).at("gradient");
  ASSERT_EQ(gradient.size(), 4 * grid_dims(w).voxels());
  for (const double v : gradient) ASSERT_EQ(v, 0.0);
}

TEST(SeedsJacobianGradientExact, MatchesFiniteDifferencesOfTheVoxelPenalty) {
  const json v = {{"dim", {13, 12, 11}}, {"spacing", {4, 3.5, 5}}, {"amplitude", 1.5}, {"mask", "brain"}};
  const Workload w = generate("jacobian_voxel_terms", v, 9);
  const Dim3 g = grid_dims(w), image = image_dims(w);
  const jac::Spacing s = spacing_of(w);
  // The same grid and mask the generator used.
  const auto grid = jac::jacobian_control_grid(g, s, 1.5, 0, 0.0, 9);
  const auto active = gi::seeds::active_voxels(image, gi::seeds::MaskShape::Brain, 9);
  ASSERT_EQ(w.variables.at("activeVoxelNumber"), static_cast<double>(active.size()));
  ASSERT_GT(active.size(), 150u);
  ASSERT_LT(active.size(), image.voxels());
  const auto map = from_bytes<std::int32_t>(w.inputs.at("voxelToActive"), "map");
  std::size_t mapped = 0;
  for (std::size_t i = 0; i < map.size(); ++i)
    if (map[i] >= 0) {
      ASSERT_EQ(active[static_cast<std::size_t>(map[i])], static_cast<std::int32_t>(i));
      ++mapped;
    }
  ASSERT_EQ(mapped, active.size());
  const auto gradient = find_reference("bspline_log_jacobian_gradient_exact")(w).at("gradient");
  expect_gradient_matches_finite_differences(
      grid, gradient, [&](const std::vector<Float4>& p) { return voxel_penalty_sum(p, g, image, s, active); }, 1e-5, 1e-4);
}

TEST(SeedsJacobianGradientExact, ZeroDisplacementGivesZeroGradient) {
  const Workload w =
      generate("jacobian_voxel_terms", {{"dim", {20, 16, 12}}, {"spacing", 3.3}, {"amplitude", 0}, {"mask", "full"}}, 1);
  for (const float t : from_bytes<float>(w.inputs.at("voxelTerms"), "terms")) ASSERT_EQ(t, 0.0f);
  const auto gradient = find_reference("bspline_log_jacobian_gradient_exact")(w).at("gradient");
  ASSERT_EQ(gradient.size(), 4 * grid_dims(w).voxels());
  for (const double v : gradient) ASSERT_EQ(v, 0.0);
}

// --------------------------------------------------------------- generators

TEST(SeedsJacobianGenerators, SizesDeterminismAndSeedDependence) {
  const std::vector<std::pair<const char*, json>> cases = {
      {"jacobian_grid", {{"dim", {30, 34, 28}}, {"spacing", 5}, {"folds", 1}}},
      {"jacobian_node_matrices", {{"dim", {30, 34, 28}}, {"spacing", {5, 4, 6}}}},
      {"jacobian_voxel_terms", {{"dim", {30, 34, 28}}, {"mask", "brain"}}},
  };
  for (const auto& [generator, variables] : cases) {
    SCOPED_TRACE(generator);
    const Workload a = generate(generator, variables, 11), b = generate(generator, variables, 11),
                   c = generate(generator, variables, 12);
    EXPECT_EQ(a.variables, b.variables);
    EXPECT_EQ(a.inputs, b.inputs);
    for (const auto& [name, bytes] : a.inputs) EXPECT_NE(bytes, c.inputs.at(name)) << name;
    const Dim3 g = grid_dims(a);
    EXPECT_EQ(a.variables.at("controlPointNumber"), static_cast<double>(g.voxels()));
    EXPECT_EQ(a.variables.at("jacobianNodeNumber"), static_cast<double>((g.x - 2) * (g.y - 2) * (g.z - 2)));
  }
  const Workload grid = generate("jacobian_grid", {{"dim", {30, 34, 28}}, {"spacing", 5}}, 3);
  EXPECT_EQ(grid.inputs.at("controlPointGrid").size(), 16 * grid_dims(grid).voxels());
  EXPECT_EQ(grid_dims(grid).x, 9);  // floor(29 / 5) + 4
  const Workload nodes = generate("jacobian_node_matrices", {{"dim", {30, 34, 28}}}, 3);
  EXPECT_EQ(nodes.inputs.at("jacobianMatrices").size(), 4 * 9 * jac::interior_nodes(grid_dims(nodes)).voxels());
  const Workload terms = generate("jacobian_voxel_terms", {{"dim", {30, 34, 28}}, {"mask", "sphere"}}, 3);
  EXPECT_EQ(terms.inputs.at("voxelToActive").size(), 4u * 30u * 34u * 28u);
  EXPECT_EQ(terms.inputs.at("voxelTerms").size(), 4 * 9 * static_cast<std::size_t>(terms.variables.at("activeVoxelNumber")));
  // Without folds the first draw is smooth_control_grid's own field.
  EXPECT_EQ(from_bytes<Float4>(grid.inputs.at("controlPointGrid"), "g").front().x,
            gi::seeds::smooth_control_grid(grid_dims(grid), 3.0, 3).front().x);
}

TEST(SeedsJacobianGenerators, BadVariablesAreNamed) {
  try {
    generate("jacobian_grid", {{"folds", 99}}, 1);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("jacobian_grid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("folds"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate("jacobian_voxel_terms", {{"mask", "torus"}}, 1), std::runtime_error);
  EXPECT_THROW(generate("jacobian_node_matrices", {{"mask", "brain"}}, 1), std::runtime_error);
  Workload w = generate("jacobian_grid", {{"dim", 12}}, 1);
  w.variables.erase("spacingY");
  try {
    find_reference("bspline_jacobian_nodes")(w);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("spacingY"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------- float emulation vs tolerance

struct SmallCase {
  std::string kernel;
  json variables;
};

const std::vector<SmallCase>& small_cases() {
  static const std::vector<SmallCase> cases = {
      {"jacobian_nodes", {{"dim", {61, 53, 47}}, {"spacing", 5}}},
      {"jacobian_nodes", {{"dim", {47, 40, 33}}, {"spacing", 3.3}, {"amplitude", 3}, {"folds", 2}}},
      {"log_jacobian_penalty", {{"dim", {61, 53, 47}}, {"spacing", 5}}},
      {"log_jacobian_penalty", {{"dim", {47, 40, 33}}, {"spacing", 3.3}, {"amplitude", 3}, {"folds", 2}}},
      {"log_jacobian_gradient_approx", {{"dim", {61, 53, 47}}, {"spacing", 5}}},
      {"log_jacobian_gradient_approx", {{"dim", {47, 40, 33}}, {"spacing", 3.3}, {"amplitude", 3}, {"folds", 2}}},
      {"jacobian_voxels", {{"dim", {61, 53, 47}}, {"spacing", 5}, {"mask", "brain"}}},
      {"jacobian_voxels", {{"dim", {47, 40, 33}}, {"spacing", 3.3}, {"amplitude", 8}, {"mask", "full"}}},
      {"log_jacobian_gradient_exact", {{"dim", {61, 53, 47}}, {"spacing", 5}, {"mask", "brain"}}},
      {"log_jacobian_gradient_exact", {{"dim", {47, 40, 33}}, {"spacing", 3.3}, {"amplitude", 4}, {"mask", "full"}}},
  };
  return cases;
}

TEST(SeedsJacobianFloatEmulation, KernelArithmeticPassesTheSpecTolerance) {
  for (const SmallCase& c : small_cases()) {
    SCOPED_TRACE(c.kernel + " " + c.variables.dump());
    const KernelSpec spec = spec_of(c.kernel);
    WorkloadSpec ws = spec.train;
    ws.variables = c.variables;
    const Workload w = generate_workload(spec, ws, 21);
    const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
    for (const bool fma : {false, true}) {
      const ErrorStats s = compare(emulate(spec.entry, w, fma), expected, spec.tolerance);
      EXPECT_EQ(s.failures, 0u) << (fma ? "fma: " : "") << s.first_failure;
      EXPECT_GT(s.values, 1000u);
    }
  }
}

// The typical bug - an input read one element off - must fail on most values,
// or the tolerance would pass anything.
TEST(SeedsJacobianFloatEmulation, ToleranceCatchesOffByOneReads) {
  struct Case {
    std::string kernel;
    json variables;
    const char* input;
    std::size_t element_bytes;
  };
  const std::vector<Case> cases = {
      {"jacobian_nodes", {{"dim", {30, 26, 22}}, {"spacing", 4}}, "controlPointGrid", 16},
      {"log_jacobian_penalty", {{"dim", {30, 26, 22}}, {"spacing", 4}}, "controlPointGrid", 16},
      {"jacobian_voxels", {{"dim", {30, 26, 22}}, {"mask", "brain"}}, "controlPointGrid", 16},
      {"log_jacobian_gradient_approx", {{"dim", {30, 26, 22}}, {"spacing", 4}}, "jacobianMatrices", 36},
      {"log_jacobian_gradient_exact", {{"dim", {30, 26, 22}}, {"mask", "brain"}}, "voxelTerms", 36},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel);
    const KernelSpec spec = spec_of(c.kernel);
    WorkloadSpec ws = spec.train;
    ws.variables = c.variables;
    Workload w = generate_workload(spec, ws, 1);
    const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
    auto& bytes = w.inputs.at(c.input);
    std::rotate(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(c.element_bytes), bytes.end());
    const ErrorStats s = compare(emulate(spec.entry, w, false), expected, spec.tolerance);
    // Out of the values that are not 0 (the gradients' w components, and
    // control points with no active voxel in reach, stay 0 whatever is read).
    EXPECT_GT(s.nonzero, 100u);
    EXPECT_GT(s.failures, s.nonzero / 2) << s.failures << " of " << s.nonzero;
  }
}

// Not run by default: the float-vs-double errors on the training workload
// (217^3, seeds 1 and 2) and every held-out workload, and the margins the
// specs' tolerances leave; also the generation and reference times.
TEST(SeedsJacobianFloatEmulation, DISABLED_MeasureTrainingWorkloadErrors) {
  // GI_MEASURE_KERNEL=log_jacobian_penalty (for example) measures one kernel only.
  const char* only = std::getenv("GI_MEASURE_KERNEL");
  for (const std::string& kernel : kKernels) {
    if (only != nullptr && kernel != only) continue;
    const KernelSpec spec = spec_of(kernel);
    std::vector<std::pair<std::string, std::uint64_t>> runs = {{"train", 1}, {"train", 2}};
    for (std::size_t v = 0; v < spec.validate.size(); ++v) runs.emplace_back("validate:" + std::to_string(v), 0);
    std::size_t validation_values = 0;
    for (const auto& [which, seed] : runs) {
      const WorkloadSpec& ws = spec.workload(which);
      const std::uint64_t generator_seed = which == "train" ? seed : ws.seed;
      const auto t0 = std::chrono::steady_clock::now();
      const Workload w = generate_workload(spec, ws, generator_seed);
      const auto t1 = std::chrono::steady_clock::now();
      const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
      const auto t2 = std::chrono::steady_clock::now();
      for (const bool fma : {false, true}) {
        const ErrorStats s = compare(emulate(spec.entry, w, fma), expected, spec.tolerance);
        if (!fma && which != "train") validation_values += s.values;
        std::cout << "[ info ] " << spec.entry << " " << which << " seed " << generator_seed << (fma ? " fma   " : " no-fma")
                  << ": " << s.values << " values, max abs " << s.max_abs << ", max rel " << s.max_rel
                  << ", largest |ref| " << s.largest_reference << ", margin " << 1.0 / s.worst_fraction << "\n";
        EXPECT_EQ(s.failures, 0u) << s.first_failure;
      }
      std::cout << "[ info ]   generate " << std::chrono::duration<double>(t1 - t0).count() << " s, reference "
                << std::chrono::duration<double>(t2 - t1).count() << " s\n";
    }
    std::cout << "[ info ] " << spec.entry << ": " << validation_values << " checked validation values\n";
  }
}

// ------------------------------------------------------------ training checks
// Each train_check reaches the case its purpose names (checked on the
// generated data, without a GPU), and the seed's float arithmetic passes it
// with the workload's own tolerance.

TEST(SeedsJacobianTrainingChecks, SeedArithmeticPassesEveryCheckWithItsTolerance) {
  std::size_t checks = 0;
  for (const std::string& kernel : kKernels) {
    const KernelSpec spec = spec_of(kernel);
    for (const WorkloadSpec& ws : spec.train_checks) {
      SCOPED_TRACE(kernel + " " + ws.json_path);
      ++checks;
      for (const std::uint64_t seed : {3u, 4u}) {
        const Workload w = generate_workload(spec, ws, seed);
        const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
        for (const bool fma : {false, true}) {
          const ErrorStats s = compare(emulate(spec.entry, w, fma), expected, spec.tolerance_of(ws));
          EXPECT_EQ(s.failures, 0u) << (fma ? "fma: " : "") << s.first_failure;
          EXPECT_GT(s.values, 0u);
        }
      }
    }
  }
  EXPECT_GE(checks, 4u);
}

// Folded and unfolded nodes in the fold checks of the penalty and its
// approximate gradient (determinant > 0 both ways); the training grid, without
// folds, has no folded node at all.
TEST(SeedsJacobianTrainingChecks, FoldChecksHaveFoldedNodesTheTrainingGridLacks) {
  auto folded = [](const std::vector<float>& matrices) {
    std::size_t n = 0;
    for (std::size_t i = 0; i + 9 <= matrices.size(); i += 9) n += det_f<false>(matrices.data() + i) <= 0.0f ? 1 : 0;
    return n;
  };
  for (const char* kernel : {"log_jacobian_penalty", "log_jacobian_gradient_approx"}) {
    SCOPED_TRACE(kernel);
    const KernelSpec spec = spec_of(kernel);
    for (const std::uint64_t seed : {1u, 2u}) {
      const Workload w = generate_workload(spec, training_check(spec, {{"folds", 2}}), seed);
      // The matrices as the kernels see them: computed in float from the grid
      // (penalty) or given (gradient).
      const std::vector<float> matrices = w.inputs.count("jacobianMatrices")
                                              ? from_bytes<float>(w.inputs.at("jacobianMatrices"), "jacobianMatrices")
                                              : emulate_nodes<false>(w, false).at("jacobianMatrices");
      const std::size_t n = folded(matrices);
      EXPECT_GT(n, 0u);
      EXPECT_LT(n, matrices.size() / 9);
    }
  }
  const KernelSpec penalty = spec_of("log_jacobian_penalty");
  EXPECT_EQ(folded(emulate_nodes<false>(generate_workload(penalty, penalty.train, 1), false).at("jacobianMatrices")),
            0u);
}

// The exact gradient's voxel range starts at floor((n - 3) s) (clamped to 0):
// with a non-integer spacing that voxel can lie in the cell 4 below node n
// (offset 4, the "offset <= 3" test false), on every axis; with the training
// spacing 5 it never does. Computed in the kernel's float arithmetic.
TEST(SeedsJacobianTrainingChecks, ExactGradientCheckScansVoxelsFourCellsBelowTheNodeOnEveryAxis) {
  auto reaches_offset_four = [](int points, int extent, float spacing) {
    for (int n = 0; n < points; ++n) {
      const int first = std::max(0, static_cast<int>(std::floor(static_cast<float>(n - 3) * spacing)));
      const int last = std::min(extent - 1, static_cast<int>(std::ceil(static_cast<float>(n + 1) * spacing)));
      for (int v = first; v <= last; ++v)
        if (n - static_cast<int>(std::floor(static_cast<float>(v) / spacing)) > 3) return true;
    }
    return false;
  };
  const KernelSpec spec = spec_of("log_jacobian_gradient_exact");
  const Workload w = generate_workload(spec, training_check(spec, {{"mask", "full"}}), 1);
  const Dim3 g = grid_dims(w), image = image_dims(w);
  EXPECT_TRUE(reaches_offset_four(g.x, image.x, static_cast<float>(w.variables.at("spacingX"))));
  EXPECT_TRUE(reaches_offset_four(g.y, image.y, static_cast<float>(w.variables.at("spacingY"))));
  EXPECT_TRUE(reaches_offset_four(g.z, image.z, static_cast<float>(w.variables.at("spacingZ"))));
  EXPECT_FALSE(reaches_offset_four(47, 217, 5.0f));
  // Full mask: every voxel, border voxels included, carries terms.
  const auto map = from_bytes<std::int32_t>(w.inputs.at("voxelToActive"), "voxelToActive");
  EXPECT_TRUE(std::all_of(map.begin(), map.end(), [](std::int32_t a) { return a >= 0; }));
}

// The full-mask checks of the voxel kernels that share the bspline_brain
// generator (deformation_field, jacobian_voxels): an odd thread count, active
// voxels on all six faces, and so the first and the last control point of
// every axis read; the slab check scatters consecutive active voxels over rows.
TEST(SeedsJacobianTrainingChecks, BrainGeneratorChecksReachEveryBorderAndScatterTheSlab) {
  for (const char* dir : {"bspline/deformation_field", "bspline/jacobian_voxels"}) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = load_kernel_spec(kSeeds / dir);
    const Workload w = generate_workload(spec, training_check(spec, {{"mask", "full"}}), 1);
    const Dim3 image = image_dims(w), grid = grid_dims(w);
    const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
    EXPECT_EQ(active.size(), image.voxels());
    EXPECT_EQ(active.size() % 2, 1u);
    // The kernel's float cell index floor(x / s) at the last voxel: its four
    // control points end at the grid's last one.
    const float s[3] = {static_cast<float>(w.variables.at("spacingX")), static_cast<float>(w.variables.at("spacingY")),
                        static_cast<float>(w.variables.at("spacingZ"))};
    const int extent[3] = {image.x, image.y, image.z}, points[3] = {grid.x, grid.y, grid.z};
    for (int a = 0; a < 3; ++a)
      EXPECT_EQ(static_cast<int>(std::floor(static_cast<float>(extent[a] - 1) / s[a])) + 3, points[a] - 1)
          << "axis " << a;
  }
  const KernelSpec spec = load_kernel_spec(kSeeds / "bspline/deformation_field");
  const Workload w = generate_workload(spec, training_check(spec, {{"mask", "slab"}}), 1);
  const Dim3 image = image_dims(w);
  const auto active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  std::size_t row_changes = 0;
  for (std::size_t t = 1; t < active.size(); ++t)
    row_changes += active[t] / image.x != active[t - 1] / image.x ? 1 : 0;
  EXPECT_GT(active.size(), 1000u);
  EXPECT_GT(row_changes, active.size() / 8) << "consecutive active voxels mostly on different rows";
}

}  // namespace
