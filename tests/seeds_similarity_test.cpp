// The similarity-measure seeds (seeds/similarity/): analytic cases of their
// CPU references (SSD of an image with itself, window weights summing to one,
// NMI gradient against a finite difference of NMI, LNCC of an affine
// intensity map), their generators (sizes, determinism), and float emulations
// of the kernels that must pass the specs' tolerances.
//
// The float-vs-double errors recorded in the specs' tolerance notes come from
//   gi_tests --gtest_also_run_disabled_tests --gtest_filter='SeedsSimilarity*Measure*'
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "float_emulation.hpp"
#include "training_checks.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "seeds/common/volume.hpp"
#include "seeds/similarity/similarity_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;
using gi::test::compare;
using gi::test::components_of;
using gi::test::ErrorStats;
using gi::test::multiply_add;
using gi::seeds::BinRescaling;
using gi::seeds::Dim3;
using gi::seeds::Float4;
using gi::seeds::from_bytes;
using gi::seeds::to_bytes;
using gi::test::training_check;
using nlohmann::json;

const fs::path kSeeds = fs::path(GI_SOURCE_DIR) / "seeds";

const char* const kKernels[] = {"similarity/ssd_values", "similarity/ssd_gradient", "similarity/nmi_joint_histogram",
                                "similarity/nmi_gradient", "similarity/lncc"};

KernelSpec spec_of(const std::string& dir) { return load_kernel_spec(kSeeds / dir); }

Workload generate(const char* generator, const json& variables, std::uint64_t seed) {
  return find_generator(generator)(variables, seed);
}

ReferenceOutputs reference(const char* entry, const Workload& w) { return find_reference(entry)(w); }

template <typename T>
std::vector<T> input(const Workload& w, const char* name) {
  return from_bytes<T>(w.inputs.at(name), name);
}

// ------------------------------------------------------------------ float emulation
// The kernels' arithmetic in float, statement by statement. `Fma` models the
// GPU compiler contracting a multiply-add into one fused operation (it does
// by default), which rounds differently; both variants must pass.

float fvar(const Workload& w, const char* name) { return static_cast<float>(w.variables.at(name)); }
int ivar(const Workload& w, const char* name) { return static_cast<int>(w.variables.at(name)); }

template <bool Fma>
std::vector<float> emulate_ssd_values(const Workload& w) {
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  std::vector<float> out(ref.size(), std::numeric_limits<float>::quiet_NaN());
  for (const std::int32_t i : active) {
    const float d = ref[static_cast<std::size_t>(i)] - war[static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(i)] = d * d;
  }
  return out;
}

template <bool Fma>
std::vector<float> emulate_ssd_gradient(const Workload& w) {
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  const auto grad = input<Float4>(w, "warpedGradient");
  std::vector<float> out(4 * active.size());
  for (std::size_t t = 0; t < active.size(); ++t) {
    const auto k = static_cast<std::size_t>(active[t]);
    const float common = -2.0f * (ref[k] - war[k]);
    out[4 * t + 0] = common * grad[t].x;
    out[4 * t + 1] = common * grad[t].y;
    out[4 * t + 2] = common * grad[t].z;
    out[4 * t + 3] = 0.0f;
  }
  return out;
}

void weights_f(float u, float* weight) {
  const float v = 1.0f - u;
  weight[0] = v * v * v / 6.0f;
  weight[1] = (3.0f * u * u * u - 6.0f * u * u + 4.0f) / 6.0f;
  weight[2] = (-3.0f * u * u * u + 3.0f * u * u + 3.0f * u + 1.0f) / 6.0f;
  weight[3] = u * u * u / 6.0f;
}

// Accumulation order: the voxels in order, or reversed (another order the
// atomics may take; the GPU's run-to-run spread is measured on the device).
template <bool Fma>
std::vector<float> emulate_histogram(const Workload& w, bool reversed = false) {
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  std::vector<float> hist = input<float>(w, "jointHistogram");
  const int rbins = ivar(w, "referenceBinNumber"), wbins = ivar(w, "warpedBinNumber");
  const float rs = fvar(w, "referenceScale"), ro = fvar(w, "referenceOffset");
  const float ws = fvar(w, "warpedScale"), wo = fvar(w, "warpedOffset");
  for (std::size_t n = 0; n < active.size(); ++n) {
    const auto k = static_cast<std::size_t>(active[reversed ? active.size() - 1 - n : n]);
    const float rp = multiply_add<Fma>(ref[k], rs, ro), wp = multiply_add<Fma>(war[k], ws, wo);
    const int rpre = static_cast<int>(std::floor(rp)), wpre = static_cast<int>(std::floor(wp));
    float rw[4], ww[4];
    weights_f(rp - static_cast<float>(rpre), rw);
    weights_f(wp - static_cast<float>(wpre), ww);
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        const int rb = rpre - 1 + a, wb = wpre - 1 + b;
        if (rb >= 0 && rb < rbins && wb >= 0 && wb < wbins) hist[static_cast<std::size_t>(rb * wbins + wb)] += rw[a] * ww[b];
      }
  }
  return hist;
}

template <bool Fma>
std::vector<float> emulate_nmi_gradient(const Workload& w) {
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  const auto grad = input<Float4>(w, "warpedGradient");
  const auto log_joint = input<float>(w, "logJointProbability"), log_war = input<float>(w, "logWarpedProbability");
  const int rbins = ivar(w, "referenceBinNumber"), wbins = ivar(w, "warpedBinNumber");
  const float rs = fvar(w, "referenceScale"), ro = fvar(w, "referenceOffset");
  const float ws = fvar(w, "warpedScale"), wo = fvar(w, "warpedOffset");
  const float nmi = fvar(w, "nmiValue"), hj = fvar(w, "jointEntropy");
  std::vector<float> out(4 * active.size());
  gi::seeds::parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto k = static_cast<std::size_t>(active[t]);
      const float rp = multiply_add<Fma>(ref[k], rs, ro), wp = multiply_add<Fma>(war[k], ws, wo);
      const int rpre = static_cast<int>(std::floor(rp)), wpre = static_cast<int>(std::floor(wp));
      float rw[4], dw[4];
      weights_f(rp - static_cast<float>(rpre), rw);
      const float u = wp - static_cast<float>(wpre), v = 1.0f - u;
      dw[0] = -0.5f * v * v;
      dw[1] = multiply_add<Fma>(1.5f * u, u, -(2.0f * u));
      dw[2] = multiply_add<Fma>(-1.5f * u, u, u) + 0.5f;
      dw[3] = 0.5f * u * u;
      float joint = 0.0f, warped = 0.0f;
      for (int b = 0; b < 4; b++) {
        const int wb = wpre - 1 + b;
        if (wb < 0 || wb >= wbins) continue;
        warped = multiply_add<Fma>(dw[b], log_war[static_cast<std::size_t>(wb)], warped);
        for (int a = 0; a < 4; a++) {
          const int rb = rpre - 1 + a;
          if (rb >= 0 && rb < rbins)
            joint = multiply_add<Fma>(rw[a] * dw[b], log_joint[static_cast<std::size_t>(rb * wbins + wb)], joint);
        }
      }
      const float derivative = multiply_add<Fma>(nmi, joint, -warped) * ws / hj;
      out[4 * t + 0] = derivative * grad[t].x;
      out[4 * t + 1] = derivative * grad[t].y;
      out[4 * t + 2] = derivative * grad[t].z;
      out[4 * t + 3] = 0.0f;
    }
  });
  return out;
}

// `shifted` false: the raw sums of I, J, I^2, J^2, IJ (what the kernel avoids;
// only for the measurement that justifies the centre shift).
template <bool Fma>
std::vector<float> emulate_lncc(const Workload& w, bool shifted = true) {
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  const int dx = ivar(w, "imageDimX"), dy = ivar(w, "imageDimY"), dz = ivar(w, "imageDimZ");
  const int radius = ivar(w, "windowRadius");
  std::vector<float> out(ref.size(), std::numeric_limits<float>::quiet_NaN());
  gi::seeds::parallel_for(active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const int index = active[t];
      const int z = index / (dx * dy), y = (index - z * dx * dy) / dx, x = index - (z * dy + y) * dx;
      const float rc = shifted ? ref[static_cast<std::size_t>(index)] : 0.0f;
      const float wc = shifted ? war[static_cast<std::size_t>(index)] : 0.0f;
      float count = 0, sr = 0, sw = 0, srr = 0, sww = 0, srw = 0;
      for (int c = -radius; c <= radius; c++)
        for (int b = -radius; b <= radius; b++)
          for (int a = -radius; a <= radius; a++) {
            const int X = x + a, Y = y + b, Z = z + c;
            if (X < 0 || X >= dx || Y < 0 || Y >= dy || Z < 0 || Z >= dz) continue;
            const auto n = static_cast<std::size_t>((Z * dy + Y) * dx + X);
            const float r = ref[n] - rc, v = war[n] - wc;
            sr += r;
            sw += v;
            srr = multiply_add<Fma>(r, r, srr);
            sww = multiply_add<Fma>(v, v, sww);
            srw = multiply_add<Fma>(r, v, srw);
            count += 1.0f;
          }
      const float mr = sr / count, mw = sw / count;
      const float vr = multiply_add<Fma>(-mr, mr, srr / count), vw = multiply_add<Fma>(-mw, mw, sww / count);
      const float cov = multiply_add<Fma>(-mr, mw, srw / count);
      out[static_cast<std::size_t>(index)] = vr > 0.0f && vw > 0.0f ? cov / std::sqrt(vr * vw) : 0.0f;
    }
  });
  return out;
}

std::vector<float> emulate(const std::string& entry, const Workload& w, bool fma) {
  if (entry == "similarity_ssd_values") return fma ? emulate_ssd_values<true>(w) : emulate_ssd_values<false>(w);
  if (entry == "similarity_ssd_gradient") return fma ? emulate_ssd_gradient<true>(w) : emulate_ssd_gradient<false>(w);
  if (entry == "similarity_nmi_joint_histogram") return fma ? emulate_histogram<true>(w) : emulate_histogram<false>(w);
  if (entry == "similarity_nmi_gradient") return fma ? emulate_nmi_gradient<true>(w) : emulate_nmi_gradient<false>(w);
  if (entry == "similarity_lncc") return fma ? emulate_lncc<true>(w) : emulate_lncc<false>(w);
  throw std::runtime_error("no emulation for " + entry);
}

ErrorStats emulation_errors(const KernelSpec& spec, const Workload& w, bool fma) {
  const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
  if (expected.size() != 1) throw std::runtime_error("expected one output");
  return compare(emulate(spec.entry, w, fma), expected[0], components_of(spec, expected[0].buffer), spec.tolerance);
}

Workload small_workload(const KernelSpec& spec, const json& variables, std::uint64_t seed) {
  WorkloadSpec ws = spec.train;
  ws.variables = variables;
  return generate_workload(spec, ws, seed);
}

// ------------------------------------------------------------------ specs

TEST(SeedsSimilaritySpec, EverySpecLoadsWithAtLeastFiveValidationWorkloads) {
  for (const char* dir : kKernels) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = spec_of(dir);
    EXPECT_EQ(spec.family, "similarity");
    EXPECT_GE(spec.validate.size(), 5u);
    EXPECT_TRUE(has_reference(spec.entry));
    EXPECT_NE(spec.tolerance_note.find("emulat"), std::string::npos) << "the note must say how it was derived";
  }
}

// ------------------------------------------------------------------ support

TEST(SeedsSimilaritySupport, TrilinearGradientMatchesAFiniteDifferenceOfTheInterpolant) {
  const Dim3 dims{6, 5, 4};
  std::vector<float> image(dims.voxels());
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(std::sin(0.7 * i) * 10 + 0.1 * i);
  const double h = 1e-6;
  for (const auto& p : std::vector<std::array<double, 3>>{{1.3, 2.7, 1.2}, {0.1, 0.4, 2.9}, {4.6, 3.5, -0.4}}) {
    const auto s = gi::seeds::trilinear_sample(image, dims, p[0], p[1], p[2], 3.0);
    for (int a = 0; a < 3; ++a) {
      auto q = p, m = p;
      q[static_cast<std::size_t>(a)] += h;
      m[static_cast<std::size_t>(a)] -= h;
      const double fd = (gi::seeds::trilinear_sample(image, dims, q[0], q[1], q[2], 3.0).value -
                         gi::seeds::trilinear_sample(image, dims, m[0], m[1], m[2], 3.0).value) /
                        (2 * h);
      EXPECT_NEAR(s.gradient[static_cast<std::size_t>(a)], fd, 1e-6) << a;
    }
  }
  // Far outside: the padding value, zero gradient.
  const auto out = gi::seeds::trilinear_sample(image, dims, -5, 2, 2, 3.0);
  EXPECT_EQ(out.value, 3.0);
  EXPECT_EQ(out.gradient[0], 0.0);
}

TEST(SeedsSimilaritySupport, ParzenWindowSumsToOneKeepsTheMeanAndItsDerivativeIsTheSlope) {
  for (const double p : {1.0, 3.25, 7.999, 12.5, 40.0625}) {
    const auto w = gi::seeds::parzen_window(p);
    double sum = 0, mean = 0, dsum = 0;
    for (int b = 0; b < 4; ++b) {
      sum += w.weight[static_cast<std::size_t>(b)];
      mean += w.weight[static_cast<std::size_t>(b)] * (w.first + b);
      dsum += w.derivative[static_cast<std::size_t>(b)];
    }
    EXPECT_NEAR(sum, 1.0, 1e-15);
    EXPECT_NEAR(mean, p, 1e-12);  // cubic B-splines reproduce linear functions
    EXPECT_NEAR(dsum, 0.0, 1e-15);
    const auto q = gi::seeds::parzen_window(p + 1e-7);
    ASSERT_EQ(q.first, w.first);
    for (int b = 0; b < 4; ++b)
      EXPECT_NEAR(w.derivative[static_cast<std::size_t>(b)],
                  (q.weight[static_cast<std::size_t>(b)] - w.weight[static_cast<std::size_t>(b)]) / 1e-7, 1e-6);
  }
}

// ------------------------------------------------------------------ SSD

TEST(SeedsSimilaritySsd, SsdOfAnImageWithItselfIsZero) {
  const Workload w = generate("similarity_ssd_values", {{"dim", {20, 18, 16}}, {"amplitude", 0}, {"floating", "same"}}, 3);
  EXPECT_EQ(w.inputs.at("referenceImage"), w.inputs.at("warpedImage"));
  const auto out = reference("similarity_ssd_values", w).at("ssdValues");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  ASSERT_GT(active.size(), 500u);
  std::size_t written = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!std::isnan(out[i])) {
      ASSERT_EQ(out[i], 0.0) << i;
      ++written;
    }
  EXPECT_EQ(written, active.size());  // exactly the active voxels
}

TEST(SeedsSimilaritySsd, ValuesAreTheSquaredDifferencesAtActiveVoxels) {
  const Workload w = generate("similarity_ssd_values", {{"dim", {20, 18, 16}}, {"mask", "sphere"}}, 4);
  const auto out = reference("similarity_ssd_values", w).at("ssdValues");
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  double total = 0;
  for (const std::int32_t i : input<std::int32_t>(w, "activeVoxels")) {
    const double d = static_cast<double>(ref[static_cast<std::size_t>(i)]) - war[static_cast<std::size_t>(i)];
    EXPECT_EQ(out[static_cast<std::size_t>(i)], d * d);
    total += d * d;
  }
  EXPECT_GT(total, 0.0);  // another subject warped: not the same image
}

TEST(SeedsSimilaritySsd, GradientIsZeroForIdenticalImages) {
  const Workload w = generate("similarity_ssd_gradient", {{"dim", {20, 18, 16}}, {"amplitude", 0}, {"floating", "same"}}, 5);
  const auto grad = input<Float4>(w, "warpedGradient");
  double largest_input = 0;
  for (const Float4& g : grad) largest_input = std::max(largest_input, std::fabs(double{g.x}));
  EXPECT_GT(largest_input, 1.0);  // the image gradient itself is not zero
  // Kept in a local: a range-for over .at() of the temporary map would read it after it is gone.
  const auto outputs = reference("similarity_ssd_gradient", w);
  for (const double v : outputs.at("ssdGradient")) ASSERT_EQ(v, 0.0);
}

TEST(SeedsSimilaritySsd, GradientIsMinusTwoDifferenceTimesTheImageGradient) {
  Workload w = generate("similarity_ssd_gradient", {{"dim", {12, 10, 9}}, {"mask", "full"}}, 6);
  auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  auto grad = input<Float4>(w, "warpedGradient");
  ref[7] = 10.0f;
  war[7] = 12.5f;
  grad[7] = Float4{1.0f, -2.0f, 0.5f, 99.0f};  // w is never read
  w.inputs["referenceImage"] = to_bytes(ref);
  w.inputs["warpedImage"] = to_bytes(war);
  w.inputs["warpedGradient"] = to_bytes(grad);
  const auto out = reference("similarity_ssd_gradient", w).at("ssdGradient");
  EXPECT_EQ(out[4 * 7 + 0], 5.0);
  EXPECT_EQ(out[4 * 7 + 1], -10.0);
  EXPECT_EQ(out[4 * 7 + 2], 2.5);
  EXPECT_EQ(out[4 * 7 + 3], 0.0);
}

// The SSD gradient is the derivative of the SSD: moving voxel i's sampling
// position by h changes (ref - warped)^2 by about gradient * h.
TEST(SeedsSimilaritySsd, GradientMatchesAFiniteDifferenceOfTheSsdAlongTheDeformation) {
  gi::seeds::SimilarityOptions o;
  o.dims = Dim3{16, 14, 12};
  o.mask = gi::seeds::MaskShape::Full;
  const auto im = gi::seeds::similarity_images(o, 7);
  const gi::seeds::SmoothDisplacement d(o.dims, o.amplitude, 7);
  const Workload w = generate("similarity_ssd_gradient", {{"dim", {16, 14, 12}}, {"mask", "full"}}, 7);
  const auto out = reference("similarity_ssd_gradient", w).at("ssdGradient");
  std::size_t checked = 0;
  for (const std::size_t t : {200u, 901u, 1500u}) {
    const int x = static_cast<int>(t % 16), y = static_cast<int>((t / 16) % 14), z = static_cast<int>(t / 224);
    const auto disp = d.at(x, y, z);
    const double h = 1e-5, r = im.reference[t];
    const double p[3] = {x + disp[0], y + disp[1], z + disp[2]};
    if (std::fabs(p[0] - std::round(p[0])) < 1e-3) continue;  // a kink of the interpolant
    const double plus = gi::seeds::trilinear_sample(im.floating, o.dims, p[0] + h, p[1], p[2], 0).value;
    const double minus = gi::seeds::trilinear_sample(im.floating, o.dims, p[0] - h, p[1], p[2], 0).value;
    const double fd = ((r - plus) * (r - plus) - (r - minus) * (r - minus)) / (2 * h);
    EXPECT_NEAR(out[4 * t], fd, 1e-3 * std::max(1.0, std::fabs(fd)));
    ++checked;
  }
  EXPECT_GE(checked, 2u);
}

// ------------------------------------------------------------------ NMI histogram

TEST(SeedsSimilarityNmi, HistogramMassEqualsTheActiveVoxelCount) {
  for (const char* floating : {"same", "other", "inverted"}) {
    SCOPED_TRACE(floating);
    const Workload w =
        generate("similarity_nmi_histogram", {{"dim", {24, 22, 20}}, {"floating", floating}, {"bins", 32}}, 8);
    const auto h = reference("similarity_nmi_joint_histogram", w).at("jointHistogram");
    ASSERT_EQ(h.size(), 32u * 32u);
    double total = 0;
    for (const double v : h) {
      ASSERT_GE(v, 0.0);
      total += v;
    }
    EXPECT_NEAR(total, w.variables.at("activeVoxelNumber"), 1e-6);
  }
}

TEST(SeedsSimilarityNmi, HistogramAddsToTheInitialContentsAndKeepsTheMeanBin) {
  Workload w = generate("similarity_nmi_histogram", {{"dim", {20, 18, 16}}, {"bins", 16}, {"warped_bins", 24}}, 9);
  const auto fresh = reference("similarity_nmi_joint_histogram", w).at("jointHistogram");
  ASSERT_EQ(fresh.size(), 16u * 24u);
  // The window keeps the mean: the histogram's mean bin is the mean position.
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  const BinRescaling rr{fvar(w, "referenceScale"), fvar(w, "referenceOffset")};
  const BinRescaling wr{fvar(w, "warpedScale"), fvar(w, "warpedOffset")};
  double mean_r = 0, mean_w = 0, hist_r = 0, hist_w = 0, mass = 0;
  for (const std::int32_t i : active) {
    const double rp = gi::seeds::bin_position(ref[static_cast<std::size_t>(i)], rr);
    const double wp = gi::seeds::bin_position(war[static_cast<std::size_t>(i)], wr);
    EXPECT_GE(rp, 1.0 - 1e-5);
    EXPECT_LE(rp, 14.0 + 1e-5);
    EXPECT_LE(wp, 22.0 + 1e-5);
    mean_r += rp;
    mean_w += wp;
  }
  for (int r = 0; r < 16; ++r)
    for (int b = 0; b < 24; ++b) {
      const double v = fresh[static_cast<std::size_t>(r * 24 + b)];
      hist_r += r * v;
      hist_w += b * v;
      mass += v;
    }
  EXPECT_NEAR(hist_r / mass, mean_r / static_cast<double>(active.size()), 1e-9);
  EXPECT_NEAR(hist_w / mass, mean_w / static_cast<double>(active.size()), 1e-9);
  // inout: the kernel adds to what the buffer holds.
  w.inputs["jointHistogram"] = to_bytes(std::vector<float>(16 * 24, 2.5f));
  const auto added = reference("similarity_nmi_joint_histogram", w).at("jointHistogram");
  for (std::size_t i = 0; i < added.size(); ++i) ASSERT_NEAR(added[i], fresh[i] + 2.5, 1e-9);
}

// ------------------------------------------------------------------ NMI gradient

double nmi_of(const std::vector<float>& ref, const std::vector<double>& war, const std::vector<std::int32_t>& active,
              int bins, BinRescaling rr, BinRescaling wr) {
  std::vector<double> h(static_cast<std::size_t>(bins * bins), 0.0);
  for (const std::int32_t i : active)
    gi::seeds::add_to_joint_histogram(gi::seeds::bin_position(ref[static_cast<std::size_t>(i)], rr),
                                      war[static_cast<std::size_t>(i)] * wr.scale + wr.offset, bins, bins, 1.0, h);
  return gi::seeds::nmi_tables(h, bins, bins).nmi;
}

TEST(SeedsSimilarityNmi, GradientMatchesAFiniteDifferenceOfNmiInOneWarpedIntensity) {
  Workload w = generate("similarity_nmi_gradient", {{"dim", {14, 12, 10}}, {"mask", "full"}, {"bins", 12}}, 10);
  const auto ref = input<float>(w, "referenceImage"), warf = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  const BinRescaling rr{fvar(w, "referenceScale"), fvar(w, "referenceOffset")};
  const BinRescaling wr{fvar(w, "warpedScale"), fvar(w, "warpedOffset")};
  // The tables as exact doubles: replace the float inputs by the double ones
  // so only the finite difference's own error remains.
  std::vector<double> war(warf.begin(), warf.end());
  std::vector<double> h(144, 0.0);
  for (const std::int32_t i : active)
    gi::seeds::add_to_joint_histogram(gi::seeds::bin_position(ref[static_cast<std::size_t>(i)], rr),
                                      gi::seeds::bin_position(warf[static_cast<std::size_t>(i)], wr), 12, 12, 1.0, h);
  const auto t = gi::seeds::nmi_tables(h, 12, 12);
  EXPECT_NEAR(t.nmi, fvar(w, "nmiValue"), 1e-6);
  // A unit gradient makes the x output N * dNMI/dW.
  auto grad = input<Float4>(w, "warpedGradient");
  for (Float4& g : grad) g = Float4{1.0f, 0.0f, 0.0f, 0.0f};
  w.inputs["warpedGradient"] = to_bytes(grad);
  const auto out = reference("similarity_nmi_gradient", w).at("nmiGradient");
  std::size_t checked = 0;
  double largest = 0;
  for (const std::size_t k : {17u, 300u, 777u, 1200u, 1500u}) {
    const double p = gi::seeds::bin_position(warf[k], wr);
    if (p < 1.2 || p > 8.8) continue;  // keep the perturbed windows inside
    const double step = 1e-3 / wr.scale;  // a thousandth of a bin
    std::vector<double> plus = war, minus = war;
    plus[k] += step;
    minus[k] -= step;
    const double fd = t.total *
                      (nmi_of(ref, plus, active, 12, rr, wr) - nmi_of(ref, minus, active, 12, rr, wr)) / (2 * step);
    const double exact = gi::seeds::nmi_intensity_derivative(gi::seeds::bin_position(ref[k], rr), p, 12, 12, t.log_joint,
                                                             t.log_warped, t.nmi, t.joint_entropy, wr.scale);
    EXPECT_NEAR(exact, fd, 1e-4 * std::fabs(fd) + 1e-8) << k;
    // The reference (float tables and scalars) agrees to float precision.
    EXPECT_NEAR(out[4 * k], fd, 2e-3 * std::fabs(fd) + 1e-6) << k;
    EXPECT_EQ(out[4 * k + 1], 0.0);
    largest = std::max(largest, std::fabs(fd));
    ++checked;
  }
  EXPECT_GE(checked, 3u);
  EXPECT_GT(largest, 1e-3);  // a real derivative, not zero
}

TEST(SeedsSimilarityNmi, TablesAreConsistentWithTheHistogram) {
  const Workload w = generate("similarity_nmi_gradient", {{"dim", {20, 18, 16}}, {"bins", 20}}, 11);
  const auto log_joint = input<float>(w, "logJointProbability"), log_war = input<float>(w, "logWarpedProbability");
  ASSERT_EQ(log_joint.size(), 400u);
  ASSERT_EQ(log_war.size(), 20u);
  double mass = 0, hj = 0;
  std::vector<double> marginal(20, 0.0);
  for (std::size_t i = 0; i < 400; ++i) {
    if (log_joint[i] == 0.0f) continue;  // empty bin
    const double p = std::exp(double{log_joint[i]});
    mass += p;
    hj -= p * log_joint[i];
    marginal[i % 20] += p;
  }
  EXPECT_NEAR(mass, 1.0, 1e-5);
  EXPECT_NEAR(hj, w.variables.at("jointEntropy"), 1e-4);
  for (std::size_t b = 0; b < 20; ++b)
    if (marginal[b] > 1e-6) {
      EXPECT_NEAR(std::log(marginal[b]), log_war[b], 1e-4) << b;
    }
  EXPECT_NEAR(w.variables.at("histogramTotal"), w.variables.at("activeVoxelNumber"), 1e-3);
  EXPECT_GT(w.variables.at("nmiValue"), 1.0);
  EXPECT_LT(w.variables.at("nmiValue"), 2.0);
}

// ------------------------------------------------------------------ LNCC

TEST(SeedsSimilarityLncc, AnAffineIntensityMapOfTheImageGivesOneOrMinusOne) {
  Workload w = generate("similarity_lncc", {{"dim", {14, 12, 10}}, {"mask", "full"}, {"radius", 2}}, 12);
  const auto ref = input<float>(w, "referenceImage");
  for (const double slope : {2.0, -0.5}) {
    std::vector<float> war(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) war[i] = static_cast<float>(slope * ref[i] + 7.0);
    w.inputs["warpedImage"] = to_bytes(war);
    const auto out = reference("similarity_lncc", w).at("lnccValues");
    ASSERT_EQ(out.size(), ref.size());
    // Float rounding of the mapped intensities leaves about 1e-7.
    for (const double v : out) ASSERT_NEAR(v, slope > 0 ? 1.0 : -1.0, 1e-5);
  }
}

TEST(SeedsSimilarityLncc, ConstantWindowGivesZeroAndTheWindowIsClippedAtTheBorder) {
  const Dim3 dims{7, 6, 5};
  std::vector<float> ref(dims.voxels()), war(dims.voxels(), 4.0f);
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = static_cast<float>(i % 5);
  EXPECT_EQ(gi::seeds::lncc_at(ref, war, dims, 3, 3, 2, 1), 0.0);  // warped is constant
  // The corner window is 2 x 2 x 2 voxels: indices 0, 1, 7, 8, 42, 43, 49, 50.
  war = ref;
  war[0] = 9.0f;
  const std::size_t corner[8] = {0, 1, 7, 8, 42, 43, 49, 50};
  double mr = 0, mw = 0;
  for (const std::size_t i : corner) {
    mr += ref[i] / 8.0;
    mw += war[i] / 8.0;
  }
  double cov = 0, vr = 0, vw = 0;
  for (const std::size_t i : corner) {
    cov += (ref[i] - mr) * (war[i] - mw);
    vr += (ref[i] - mr) * (ref[i] - mr);
    vw += (war[i] - mw) * (war[i] - mw);
  }
  EXPECT_NEAR(gi::seeds::lncc_at(ref, war, dims, 0, 0, 0, 1), cov / std::sqrt(vr * vw), 1e-12);
  EXPECT_LT(gi::seeds::lncc_at(ref, war, dims, 0, 0, 0, 1), 0.99);
}

TEST(SeedsSimilarityLncc, WarpedImagesOfTheSameSubjectCorrelateMoreThanOthers) {
  auto mean_lncc = [](const char* floating) {
    const Workload w = generate("similarity_lncc", {{"dim", {30, 28, 26}}, {"amplitude", 0.5}, {"floating", floating}}, 13);
    const auto out = reference("similarity_lncc", w).at("lnccValues");
    double sum = 0;
    std::size_t n = 0;
    for (const double v : out)
      if (!std::isnan(v)) {
        EXPECT_LE(std::fabs(v), 1.0 + 1e-12);
        sum += v;
        ++n;
      }
    return sum / static_cast<double>(n);
  };
  const double same = mean_lncc("same"), inverted = mean_lncc("inverted");
  EXPECT_GT(same, 0.3);
  EXPECT_LT(inverted, -0.3);
}

// ------------------------------------------------------------------ generators

TEST(SeedsSimilarityGenerators, SizesMatchTheSpecsAndGenerationIsDeterministicPerSeed) {
  const json small = {{"dim", {26, 22, 20}}};
  for (const char* dir : kKernels) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = spec_of(dir);
    const Workload a = small_workload(spec, small, 11), b = small_workload(spec, small, 11),
                   c = small_workload(spec, small, 12);
    EXPECT_EQ(a.variables, b.variables);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_NE(a.inputs.at("warpedImage"), c.inputs.at("warpedImage"));
    EXPECT_NE(a.inputs.at("activeVoxels"), c.inputs.at("activeVoxels"));
    // build_launch_plan checks every input's size against the spec's counts.
    const LaunchPlan plan = build_launch_plan(spec, a, 128);
    EXPECT_GT(plan.min_bytes_moved, 0.0);
    EXPECT_EQ(a.variables.at("voxelNumber"), 26 * 22 * 20);
    EXPECT_GT(a.variables.at("activeVoxelNumber"), 100);
  }
}

TEST(SeedsSimilarityGenerators, WarpedImageFollowsTheFloatingKindAndAmplitude) {
  const json dim = {26, 22, 20};
  const Workload same0 = generate("similarity_ssd_values", {{"dim", dim}, {"amplitude", 0}, {"floating", "same"}}, 1);
  const Workload same2 = generate("similarity_ssd_values", {{"dim", dim}, {"amplitude", 2}, {"floating", "same"}}, 1);
  const Workload inv0 = generate("similarity_ssd_values", {{"dim", dim}, {"amplitude", 0}, {"floating", "inverted"}}, 1);
  EXPECT_EQ(same0.inputs.at("warpedImage"), same0.inputs.at("referenceImage"));
  EXPECT_NE(same2.inputs.at("warpedImage"), same2.inputs.at("referenceImage"));
  const auto ref = input<float>(inv0, "referenceImage"), war = input<float>(inv0, "warpedImage");
  for (std::size_t i = 0; i < ref.size(); i += 97) ASSERT_EQ(war[i], 150.0f - ref[i]);
  // An unknown variable or kind names the generator.
  try {
    generate("similarity_lncc", {{"dim", dim}, {"floating", "t2"}}, 1);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("floating"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate("similarity_nmi_histogram", {{"dim", dim}, {"bin", 32}}, 1), std::runtime_error);
}

// ------------------------------------------------------------------ float emulation

// The kernels' own float arithmetic passes the spec's tolerance on small
// workloads of every kind, with and without fused multiply-adds.
TEST(SeedsSimilarityEmulation, KernelArithmeticPassesTheSpecTolerance) {
  const std::vector<json> cases = {
      {{"dim", {40, 36, 30}}, {"mask", "brain"}},
      {{"dim", {33, 30, 28}}, {"mask", "full"}, {"floating", "inverted"}, {"amplitude", 4}},
  };
  for (const char* dir : kKernels) {
    const KernelSpec spec = spec_of(dir);
    for (const json& c : cases) {
      SCOPED_TRACE(std::string(dir) + " " + c.dump());
      const Workload w = small_workload(spec, c, 21);
      for (const bool fma : {false, true}) {
        const ErrorStats s = emulation_errors(spec, w, fma);
        EXPECT_EQ(s.failures, 0u) << (fma ? "(fma) " : "") << s.first_failure;
        EXPECT_GT(s.values, 1000u);
      }
    }
  }
}

// A tolerance that passes anything would make the test above meaningless:
// the typical bug - an input read one element off - must fail on most values
// (on most bins for the histogram).
TEST(SeedsSimilarityEmulation, ToleranceCatchesOffByOneReads) {
  struct Case {
    const char* dir;
    const char* input;
    std::size_t element_bytes;
  };
  const std::vector<Case> cases = {
      {"similarity/ssd_values", "warpedImage", 4},        {"similarity/ssd_gradient", "warpedGradient", 16},
      {"similarity/nmi_joint_histogram", "warpedImage", 4}, {"similarity/nmi_gradient", "logJointProbability", 4},
      {"similarity/lncc", "warpedImage", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dir);
    const KernelSpec spec = spec_of(c.dir);
    Workload w = small_workload(spec, {{"dim", {30, 26, 22}}, {"mask", "brain"}}, 1);
    const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
    auto& bytes = w.inputs.at(c.input);
    std::rotate(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(c.element_bytes), bytes.end());
    const ErrorStats s =
        compare(emulate(spec.entry, w, false), expected[0], components_of(spec, expected[0].buffer), spec.tolerance);
    // Most histogram bins are empty either way: count the occupied ones.
    const auto occupied = static_cast<std::size_t>(
        std::count_if(expected[0].values.begin(), expected[0].values.end(), [](double v) { return v != 0; }));
    EXPECT_GT(s.failures, std::min(s.values, occupied) / 2) << s.failures << " of " << s.values;
  }
}

// Not run by default: measures the float-vs-double errors that the specs'
// tolerance notes record, on the training workload (two seeds) and on every
// held-out workload, and the margin the spec's tolerance leaves.
TEST(SeedsSimilarityEmulation, DISABLED_MeasureTrainingWorkloadErrors) {
  const char* only = std::getenv("GI_SIMILARITY_MEASURE");  // optional: one kernel folder
  const char* only_train = std::getenv("GI_SIMILARITY_MEASURE_TRAIN");  // optional: the training workload only
  for (const char* dir : kKernels) {
    if (only != nullptr && std::string(dir).find(only) == std::string::npos) continue;
    const KernelSpec spec = spec_of(dir);
    std::vector<std::pair<std::string, std::uint64_t>> runs = {{"train", 1}, {"train", 2}};
    for (std::size_t c = 1; c <= spec.train_checks.size(); ++c)
      for (const std::uint64_t seed : {1u, 2u}) runs.emplace_back("train:" + std::to_string(c), seed);
    for (std::size_t v = 0; v < spec.validate.size() && only_train == nullptr; ++v) runs.emplace_back("validate:" + std::to_string(v), 0);
    for (const auto& [which, seed] : runs) {
      const WorkloadSpec& ws = spec.workload(which);
      const auto t0 = std::chrono::steady_clock::now();
      const bool training = which.rfind("train", 0) == 0;
      const Workload w = generate_workload(spec, ws, training ? seed : ws.seed);
      const auto t1 = std::chrono::steady_clock::now();
      const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
      const auto t2 = std::chrono::steady_clock::now();
      std::cout << "[ info ] " << spec.entry << " " << which << ": generate "
                << std::chrono::duration<double>(t1 - t0).count() << " s, reference "
                << std::chrono::duration<double>(t2 - t1).count() << " s\n";
      const std::size_t components = components_of(spec, expected[0].buffer);
      for (const bool fma : {false, true}) {
        const ErrorStats s = compare(emulate(spec.entry, w, fma), expected[0], components, spec.tolerance_of(ws));
        std::cout << "[ info ] " << spec.entry << " " << which << (fma ? " fma   " : " no-fma") << ": " << s.values
                  << " values, max abs " << s.max_abs << ", max rel " << s.max_rel << ", largest |ref| "
                  << s.largest_reference << ", margin " << 1.0 / s.worst_fraction << "\n";
        EXPECT_EQ(s.failures, 0u) << s.first_failure;
      }
      if (spec.entry == "similarity_nmi_joint_histogram") {
        const ErrorStats s = compare(emulate_histogram<true>(w, true), expected[0], components, spec.tolerance_of(ws));
        std::cout << "[ info ]   reversed order: max abs " << s.max_abs << ", max rel " << s.max_rel << ", margin "
                  << 1.0 / s.worst_fraction << "\n";
      }
      if (spec.entry == "similarity_lncc") {
        const ErrorStats s = compare(emulate_lncc<true>(w, false), expected[0], components, spec.tolerance_of(ws));
        std::cout << "[ info ]   raw (unshifted) sums would give: max abs " << s.max_abs << ", failures "
                  << s.failures << "\n";
      }
    }
  }
}

// ------------------------------------------------------------ training checks
// Each train_check reaches the case its purpose names (checked on the
// generated data, without a GPU), and the seed's float arithmetic passes it
// with the workload's own tolerance.

TEST(SeedsSimilarityTrainingChecks, SeedArithmeticPassesEveryCheckWithItsTolerance) {
  std::size_t checks = 0;
  for (const char* dir : kKernels) {
    const KernelSpec spec = spec_of(dir);
    for (const WorkloadSpec& ws : spec.train_checks) {
      SCOPED_TRACE(std::string(dir) + " " + ws.json_path);
      ++checks;
      for (const std::uint64_t seed : {3u, 4u}) {
        const Workload w = generate_workload(spec, ws, seed);
        const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
        const std::size_t components = components_of(spec, expected[0].buffer);
        for (const bool fma : {false, true}) {
          const ErrorStats s = compare(emulate(spec.entry, w, fma), expected[0], components, spec.tolerance_of(ws));
          EXPECT_EQ(s.failures, 0u) << (fma ? "fma: " : "") << s.first_failure;
          EXPECT_GT(s.values, 0u);
        }
        if (spec.entry == "similarity_nmi_joint_histogram") {
          const ErrorStats s =
              compare(emulate_histogram<true>(w, true), expected[0], components, spec.tolerance_of(ws));
          EXPECT_EQ(s.failures, 0u) << "reversed order: " << s.first_failure;
        }
      }
    }
  }
  EXPECT_GE(checks, 6u);
}

// The full-mask checks of the SSD kernels: an odd thread count (spare
// threads in the last block for every block size) and active border voxels.
TEST(SeedsSimilarityTrainingChecks, SsdChecksHaveAnOddCountOfActiveVoxelsReachingTheBorders) {
  for (const char* dir : {"similarity/ssd_values", "similarity/ssd_gradient"}) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = spec_of(dir);
    const Workload w = generate_workload(spec, training_check(spec, {{"mask", "full"}}), 1);
    const auto active = input<std::int32_t>(w, "activeVoxels");
    EXPECT_EQ(active.size() % 2, 1u);
    EXPECT_EQ(active.size(), static_cast<std::size_t>(ivar(w, "voxelNumber")));
  }
}

// Each operand of the histogram's bin test
//   referenceBin >= 0 && referenceBin < referenceBinNumber && warpedBin >= 0 && warpedBin < warpedBinNumber
// is the first false one for some (voxel, window bin) of the bin-margin
// checks; nmi_gradient tests the warped bin and then the reference bin, each
// operand false somewhere too. Positions in the kernels' float arithmetic.
struct BinTests {
  std::array<std::size_t, 4> first_false{};  // the histogram's chain
  std::array<std::size_t, 4> gradient{};     // warped >= 0, warped < n (if@73), reference >= 0, reference < n (if@77)
};

BinTests bin_tests(const Workload& w) {
  const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
  const auto active = input<std::int32_t>(w, "activeVoxels");
  const int rbins = ivar(w, "referenceBinNumber"), wbins = ivar(w, "warpedBinNumber");
  const float rs = fvar(w, "referenceScale"), ro = fvar(w, "referenceOffset");
  const float ws = fvar(w, "warpedScale"), wo = fvar(w, "warpedOffset");
  BinTests t;
  for (const std::int32_t i : active) {
    const auto k = static_cast<std::size_t>(i);
    const int rpre = static_cast<int>(std::floor(ref[k] * rs + ro)), wpre = static_cast<int>(std::floor(war[k] * ws + wo));
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const int rb = rpre - 1 + a, wb = wpre - 1 + b;
        const bool holds[4] = {rb >= 0, rb < rbins, wb >= 0, wb < wbins};
        for (std::size_t op = 0; op < 4; ++op)
          if (!holds[op]) {
            ++t.first_false[op];
            break;
          }
      }
    for (int b = 0; b < 4; ++b) {
      const int wb = wpre - 1 + b;
      if (wb < 0) {
        ++t.gradient[0];
        continue;
      }
      if (wb >= wbins) {
        ++t.gradient[1];
        continue;
      }
      for (int a = 0; a < 4; ++a) {
        const int rb = rpre - 1 + a;
        t.gradient[2] += rb < 0 ? 1 : 0;
        t.gradient[3] += rb >= 0 && rb >= rbins ? 1 : 0;
      }
    }
  }
  return t;
}

TEST(SeedsSimilarityTrainingChecks, BinMarginChecksCutParzenWindowsOnBothSidesOfBothAxes) {
  for (const char* dir : {"similarity/nmi_joint_histogram", "similarity/nmi_gradient"}) {
    SCOPED_TRACE(dir);
    const KernelSpec spec = spec_of(dir);
    for (const std::uint64_t seed : {1u, 2u}) {
      const BinTests t = bin_tests(generate_workload(spec, training_check(spec, {{"bin_margin", -2}}), seed));
      for (std::size_t op = 0; op < 4; ++op) {
        EXPECT_GT(t.first_false[op], 0u) << "histogram operand " << op;
        EXPECT_GT(t.gradient[op], 0u) << "gradient operand " << op;
      }
    }
  }
}

// The sparse histogram check: few contributions per bin, so the float sums
// stay within its tight tolerance in any order while one dropped voxel fails
// it; on a registration-sized histogram the spec's own tolerance lets one
// dropped voxel through.
TEST(SeedsSimilarityTrainingChecks, SparseHistogramCheckCatchesOneDroppedVoxel) {
  const KernelSpec spec = spec_of("similarity/nmi_joint_histogram");
  const WorkloadSpec& ws = training_check(spec, {{"bins", 128}});
  ASSERT_TRUE(ws.tolerance.has_value());
  auto drop_one = [](Workload w, std::size_t which) {
    auto active = input<std::int32_t>(w, "activeVoxels");
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(which));
    w.inputs["activeVoxels"] = to_bytes(active);
    return w;
  };
  for (const std::uint64_t seed : {1u, 2u}) {
    SCOPED_TRACE(seed);
    const Workload w = generate_workload(spec, ws, seed);
    const auto expected = expected_outputs(spec, w, find_reference(spec.entry)(w));
    for (const bool reversed : {false, true})
      EXPECT_EQ(compare(emulate_histogram<true>(w, reversed), expected[0], 1, *ws.tolerance).failures, 0u);
    // Every voxel: its largest window product (at least (23/48)^2) is more
    // than twice the allowance of the bin it lands in, so dropping any one
    // voxel fails whatever the float error (itself within the allowance).
    const auto active = input<std::int32_t>(w, "activeVoxels");
    const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
    const int wbins = ivar(w, "warpedBinNumber");
    const BinRescaling rr{fvar(w, "referenceScale"), fvar(w, "referenceOffset")},
        wr{fvar(w, "warpedScale"), fvar(w, "warpedOffset")};
    double tightest = 0;  // largest allowance / contribution over the voxels
    for (const std::int32_t i : active) {
      const auto k = static_cast<std::size_t>(i);
      const auto r = gi::seeds::parzen_window(gi::seeds::bin_position(ref[k], rr));
      const auto v = gi::seeds::parzen_window(gi::seeds::bin_position(war[k], wr));
      const auto a = static_cast<std::size_t>(std::max_element(r.weight.begin(), r.weight.end()) - r.weight.begin());
      const auto b = static_cast<std::size_t>(std::max_element(v.weight.begin(), v.weight.end()) - v.weight.begin());
      const double contribution = r.weight[a] * v.weight[b];
      const double mass = expected[0].values[static_cast<std::size_t>(r.first + static_cast<int>(a)) *
                                                 static_cast<std::size_t>(wbins) +
                                             static_cast<std::size_t>(v.first + static_cast<int>(b))];
      tightest = std::max(tightest, (ws.tolerance->abs + ws.tolerance->rel * mass) / contribution);
    }
    EXPECT_LT(tightest, 0.5);
    const std::size_t n = active.size();
    for (const std::size_t which : {std::size_t{0}, n / 3, n - 1})
      EXPECT_GT(compare(emulate_histogram<false>(drop_one(w, which), false), expected[0], 1, *ws.tolerance).failures,
                0u)
          << "voxel " << which;
  }
  // One voxel dropped from a 97^3 brain-masked histogram of 64 bins (the
  // training binning) passes the spec's tolerance.
  const Workload big = generate("similarity_nmi_histogram", {{"dim", 97}, {"bins", 64}}, 1);
  const auto big_expected = expected_outputs(spec, big, find_reference(spec.entry)(big));
  EXPECT_EQ(compare(emulate_histogram<false>(drop_one(big, 1000), false), big_expected[0], 1, spec.tolerance).failures,
            0u);
}

// LNCC's check: windows cut by each image face (each operand of the window
// test the first false one somewhere), windows of constant reference intensity
// and windows where the reference varies but the warped intensity is constant
// (the second variance test false).
TEST(SeedsSimilarityTrainingChecks, LnccCheckHasCutWindowsAndConstantWindows) {
  const KernelSpec spec = spec_of("similarity/lncc");
  for (const std::uint64_t seed : {1u, 2u}) {
    SCOPED_TRACE(seed);
    const Workload w = generate_workload(spec, training_check(spec, {{"skull_stripped", true}}), seed);
    const Dim3 d{ivar(w, "imageDimX"), ivar(w, "imageDimY"), ivar(w, "imageDimZ")};
    const int r = ivar(w, "windowRadius");
    const auto ref = input<float>(w, "referenceImage"), war = input<float>(w, "warpedImage");
    const auto active = input<std::int32_t>(w, "activeVoxels");
    std::array<std::size_t, 6> cut{};
    std::size_t flat_reference = 0, flat_warped_only = 0;
    const int extent[3] = {d.x, d.y, d.z};
    for (const std::int32_t i : active) {
      const auto k = static_cast<std::size_t>(i);
      const int at[3] = {static_cast<int>(k % static_cast<std::size_t>(d.x)),
                         static_cast<int>((k / static_cast<std::size_t>(d.x)) % static_cast<std::size_t>(d.y)),
                         static_cast<int>(k / (static_cast<std::size_t>(d.x) * static_cast<std::size_t>(d.y)))};
      bool reference_varies = false, warped_varies = false;
      for (int c = -r; c <= r; ++c)
        for (int b = -r; b <= r; ++b)
          for (int a = -r; a <= r; ++a) {
            const int p[3] = {at[0] + a, at[1] + b, at[2] + c};
            bool inside = true;
            for (std::size_t op = 0; op < 6 && inside; ++op)
              if (!(op % 2 == 0 ? p[op / 2] >= 0 : p[op / 2] < extent[op / 2])) {
                ++cut[op];
                inside = false;
              }
            if (!inside) continue;
            const std::size_t n = d.index(p[0], p[1], p[2]);
            reference_varies = reference_varies || ref[n] != ref[k];
            warped_varies = warped_varies || war[n] != war[k];
          }
      flat_reference += reference_varies ? 0 : 1;
      flat_warped_only += reference_varies && !warped_varies ? 1 : 0;
    }
    for (std::size_t op = 0; op < 6; ++op) EXPECT_GT(cut[op], 0u) << "operand " << op;
    EXPECT_GT(flat_reference, 0u);
    EXPECT_GT(flat_warped_only, 0u);
  }
}

// LNCC's shell check, for its switch path 1: a CUDA block stages the box of
// its windows ([min - r, max + r] of its active voxels per axis, clipped to
// the image) in shared memory when the box has at most LNCC_TILE voxels, and
// sums from global memory otherwise. On the shell check both happen at every
// LNCC_TILE value of the spec and every tuned block size.
TEST(SeedsSimilarityTrainingChecks, LnccShellCheckTakesTheTileAndTheGlobalFallbackOfPath1) {
  const KernelSpec spec = spec_of("similarity/lncc");
  std::vector<long long> tiles;
  for (const auto& s : spec.switches)
    if (s.name == "LNCC_TILE")
      for (const std::string& v : s.values) tiles.push_back(std::stoll(v));
  ASSERT_FALSE(tiles.empty());
  ASSERT_FALSE(spec.block_sizes.empty());
  for (const std::uint64_t seed : {1u, 2u}) {
    SCOPED_TRACE(seed);
    const Workload w = generate_workload(spec, training_check(spec, {{"mask", "shell"}}), seed);
    const int extent[3] = {ivar(w, "imageDimX"), ivar(w, "imageDimY"), ivar(w, "imageDimZ")};
    const int r = ivar(w, "windowRadius");
    const auto active = input<std::int32_t>(w, "activeVoxels");
    ASSERT_FALSE(active.empty());
    for (const unsigned block : spec.block_sizes) {
      std::vector<long long> volumes;
      for (std::size_t start = 0; start < active.size(); start += block) {
        int low[3] = {extent[0], extent[1], extent[2]}, high[3] = {-1, -1, -1};
        for (std::size_t t = start; t < std::min(active.size(), start + block); ++t) {
          const int k = active[t];
          const int at[3] = {k % extent[0], (k / extent[0]) % extent[1], k / (extent[0] * extent[1])};
          for (int axis = 0; axis < 3; ++axis) {
            low[axis] = std::min(low[axis], at[axis]);
            high[axis] = std::max(high[axis], at[axis]);
          }
        }
        long long volume = 1;
        for (int axis = 0; axis < 3; ++axis)
          volume *= std::max(std::min(high[axis] + r, extent[axis] - 1) - std::max(low[axis] - r, 0) + 1, 0);
        volumes.push_back(volume);
      }
      for (const long long tile : tiles) {
        const auto fits = static_cast<std::size_t>(
            std::count_if(volumes.begin(), volumes.end(), [tile](long long v) { return v <= tile; }));
        EXPECT_GT(fits, 0u) << "block size " << block << ", LNCC_TILE " << tile;
        EXPECT_LT(fits, volumes.size()) << "block size " << block << ", LNCC_TILE " << tile;
      }
    }
  }
}

TEST(SeedsSimilarityTrainingChecks, SkullStrippedImagesAreZeroOutsideTheBrainOnly) {
  const json v = {{"dim", {33, 29, 31}}, {"mask", "full"}, {"skull_stripped", true}, {"amplitude", 0}};
  const Workload stripped = generate("similarity_ssd_values", v, 5);
  json plain_v = v;
  plain_v.erase("skull_stripped");
  const Workload plain = generate("similarity_ssd_values", plain_v, 5);
  const auto a = input<float>(stripped, "referenceImage"), b = input<float>(plain, "referenceImage");
  std::size_t zeroed = 0, kept = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == 0.0f && b[i] != 0.0f) ++zeroed;
    else if (a[i] == b[i]) ++kept;
  }
  EXPECT_EQ(zeroed + kept, a.size());
  EXPECT_GT(zeroed, a.size() / 4);
  EXPECT_GT(kept, a.size() / 8);
  EXPECT_THROW(generate("similarity_lncc", {{"dim", 9}, {"skull_stripped", "yes"}}, 1), std::runtime_error);
  EXPECT_THROW(generate("similarity_nmi_histogram", {{"dim", 9}, {"bin_margin", -20}}, 1), std::runtime_error);
}

}  // namespace
