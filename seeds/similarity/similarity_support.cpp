#include "seeds/similarity/similarity_support.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "seeds/common/bspline.hpp"
#include "seeds/common/rng.hpp"

namespace gi::seeds {

namespace {

// Streams of this family's random quantities (rng.hpp's enum is shared; these
// values lie far above it).
constexpr std::uint64_t kStreamDisplacement = 0x5100;  // + 0, 1, 2 for x, y, z
constexpr std::uint64_t kOtherSubject = 0x51aa;        // seed of the "other" phantom

double mean_extent(Dim3 d) { return (d.x + d.y + d.z) / 3.0; }

}  // namespace

const std::vector<std::string>& floating_kind_names() {
  static const std::vector<std::string> names = {"same", "other", "inverted"};
  return names;
}

FloatingKind floating_kind_from_name(const std::string& name) {
  if (name == "same") return FloatingKind::Same;
  if (name == "other") return FloatingKind::Other;
  if (name == "inverted") return FloatingKind::Inverted;
  throw std::runtime_error("unknown floating image kind '" + name + "' (expected same, other or inverted)");
}

std::vector<std::string> similarity_option_names(std::vector<std::string> extra) {
  for (const char* name : {"dim", "amplitude", "mask", "floating", "skull_stripped"}) extra.emplace_back(name);
  return extra;
}

SimilarityOptions similarity_options(const GeneratorArgs& args) {
  SimilarityOptions o;
  o.dims = args.dims("dim", Dim3{217, 217, 217});
  o.amplitude = args.number("amplitude", 2.0, 0.0, 20.0);
  o.mask = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  o.floating = floating_kind_from_name(args.choice("floating", "other", floating_kind_names()));
  o.skull_stripped = args.flag("skull_stripped", false);
  return o;
}

SmoothDisplacement::SmoothDisplacement(Dim3 dims, double amplitude, std::uint64_t seed)
    : amplitude_(amplitude),
      x_(dims, std::max(4.0, 0.1 * mean_extent(dims)), seed, kStreamDisplacement + 0),
      y_(dims, std::max(4.0, 0.1 * mean_extent(dims)), seed, kStreamDisplacement + 1),
      z_(dims, std::max(4.0, 0.1 * mean_extent(dims)), seed, kStreamDisplacement + 2) {}

TrilinearSample trilinear_sample(const std::vector<float>& image, Dim3 dims, double x, double y, double z,
                                 double padding) {
  const double pos[3] = {x, y, z};
  int pre[3];
  double weight[3][2];
  const double slope[2] = {-1.0, 1.0};  // d weight / d position
  for (int a = 0; a < 3; ++a) {
    pre[a] = static_cast<int>(std::floor(pos[a]));
    const double rel = pos[a] - pre[a];
    weight[a][0] = 1.0 - rel;
    weight[a][1] = rel;
  }
  TrilinearSample s;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) {
        const int X = pre[0] + a, Y = pre[1] + b, Z = pre[2] + c;
        const bool inside = X >= 0 && X < dims.x && Y >= 0 && Y < dims.y && Z >= 0 && Z < dims.z;
        const double v = inside ? static_cast<double>(image[dims.index(X, Y, Z)]) : padding;
        s.value += weight[0][a] * weight[1][b] * weight[2][c] * v;
        s.gradient[0] += slope[a] * weight[1][b] * weight[2][c] * v;
        s.gradient[1] += weight[0][a] * slope[b] * weight[2][c] * v;
        s.gradient[2] += weight[0][a] * weight[1][b] * slope[c] * v;
      }
  return s;
}

SimilarityImages similarity_images(const SimilarityOptions& options, std::uint64_t seed) {
  const Dim3 dims = options.dims;
  SimilarityImages im;
  im.dims = dims;
  im.active = active_voxels(dims, options.mask, seed);
  im.reference = tissue_image(dims, seed);
  std::uint64_t floating_subject = seed;
  switch (options.floating) {
    case FloatingKind::Same:
      im.floating = im.reference;
      break;
    case FloatingKind::Other:
      floating_subject = mix64(seed ^ kOtherSubject);
      im.floating = tissue_image(dims, floating_subject);
      break;
    case FloatingKind::Inverted:
      im.floating = im.reference;
      for (float& v : im.floating) v = 150.0f - v;
      break;
  }
  if (options.skull_stripped) {
    zero_outside_brain(im.reference, dims, seed);
    zero_outside_brain(im.floating, dims, floating_subject);
  }
  const SmoothDisplacement displacement(dims, options.amplitude, seed);
  im.warped.resize(dims.voxels());
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t zz = z0; zz < z1; ++zz) {
      const int z = static_cast<int>(zz);
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x) {
          const std::array<double, 3> d = displacement.at(x, y, z);
          im.warped[dims.index(x, y, z)] =
              static_cast<float>(trilinear_sample(im.floating, dims, x + d[0], y + d[1], z + d[2], 0.0).value);
        }
    }
  });
  im.warped_gradient.resize(im.active.size());
  const std::size_t sx = static_cast<std::size_t>(dims.x), sxy = sx * static_cast<std::size_t>(dims.y);
  parallel_for(im.active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto i = static_cast<std::size_t>(im.active[t]);
      const int z = static_cast<int>(i / sxy), y = static_cast<int>((i % sxy) / sx), x = static_cast<int>(i % sx);
      const std::array<double, 3> d = displacement.at(x, y, z);
      const TrilinearSample s = trilinear_sample(im.floating, dims, x + d[0], y + d[1], z + d[2], 0.0);
      im.warped_gradient[t] = Float4{static_cast<float>(s.gradient[0]), static_cast<float>(s.gradient[1]),
                                     static_cast<float>(s.gradient[2]), 0.0f};
    }
  });
  return im;
}

fitness::Workload image_pair_workload(const SimilarityImages& images) {
  fitness::Workload w;
  w.variables = {
      {"imageDimX", images.dims.x},
      {"imageDimY", images.dims.y},
      {"imageDimZ", images.dims.z},
      {"voxelNumber", static_cast<double>(images.dims.voxels())},
      {"activeVoxelNumber", static_cast<double>(images.active.size())},
  };
  w.inputs["referenceImage"] = to_bytes(images.reference);
  w.inputs["warpedImage"] = to_bytes(images.warped);
  w.inputs["activeVoxels"] = to_bytes(images.active);
  return w;
}

ImagePair read_image_pair(const fitness::Workload& w, const char* who) {
  ImagePair p;
  p.dims = Dim3{workload_int(w, "imageDimX", who), workload_int(w, "imageDimY", who),
                workload_int(w, "imageDimZ", who)};
  p.active = from_bytes<std::int32_t>(w.inputs.at("activeVoxels"), "activeVoxels");
  p.reference = from_bytes<float>(w.inputs.at("referenceImage"), "referenceImage");
  p.warped = from_bytes<float>(w.inputs.at("warpedImage"), "warpedImage");
  if (p.reference.size() != p.dims.voxels() || p.warped.size() != p.dims.voxels())
    throw std::runtime_error(std::string(who) + " reference: the images have " + std::to_string(p.reference.size()) +
                             " and " + std::to_string(p.warped.size()) + " voxels, expected " +
                             std::to_string(p.dims.voxels()));
  for (const std::int32_t i : p.active)
    if (i < 0 || static_cast<std::size_t>(i) >= p.dims.voxels())
      throw std::runtime_error(std::string(who) + " reference: active voxel " + std::to_string(i) +
                               " outside the image");
  return p;
}

// ---------------------------------------------------------------- NMI

ParzenWindow parzen_window(double position) {
  ParzenWindow w;
  const double pre = std::floor(position);
  const double u = position - pre;
  w.first = static_cast<int>(pre) - 1;
  double basis[4];
  bspline_basis(u, basis);
  for (int i = 0; i < 4; ++i) w.weight[static_cast<std::size_t>(i)] = basis[i];
  w.derivative = {-0.5 * (1.0 - u) * (1.0 - u), 1.5 * u * u - 2.0 * u, -1.5 * u * u + u + 0.5, 0.5 * u * u};
  return w;
}

BinRescaling bin_rescaling(const std::vector<float>& image, const std::vector<std::int32_t>& active, int bins,
                           double margin) {
  if (bins < 4) throw std::runtime_error("bin_rescaling: at least 4 bins are needed, got " + std::to_string(bins));
  const double first = margin, last = bins - 1 - margin;
  if (!(last > first))
    throw std::runtime_error("bin_rescaling: a margin of " + std::to_string(margin) + " bins leaves no range in " +
                             std::to_string(bins) + " bins");
  if (active.empty()) return BinRescaling{1.0f, static_cast<float>(first)};
  double lo = image[static_cast<std::size_t>(active[0])], hi = lo;
  for (const std::int32_t i : active) {
    lo = std::min(lo, static_cast<double>(image[static_cast<std::size_t>(i)]));
    hi = std::max(hi, static_cast<double>(image[static_cast<std::size_t>(i)]));
  }
  const double scale = hi > lo ? (last - first) / (hi - lo) : 1.0;
  return BinRescaling{static_cast<float>(scale), static_cast<float>(first - lo * scale)};
}

NmiBinning nmi_binning(const GeneratorArgs& args, const SimilarityImages& images) {
  NmiBinning b;
  b.reference_bins = args.integer("bins", 64, 5, 512);
  b.warped_bins = args.integer("warped_bins", b.reference_bins, 5, 512);
  const double margin = args.number("bin_margin", 1.0, -8.0, 2.0);
  if (std::min(b.reference_bins, b.warped_bins) - 1 - margin <= margin)
    args.fail("bin_margin", "a margin of " + std::to_string(margin) + " bins on each side leaves no range in " +
                                std::to_string(std::min(b.reference_bins, b.warped_bins)) + " bins");
  b.reference = bin_rescaling(images.reference, images.active, b.reference_bins, margin);
  b.warped = bin_rescaling(images.warped, images.active, b.warped_bins, margin);
  return b;
}

void add_binning_variables(fitness::Workload& w, const NmiBinning& b) {
  w.variables["referenceBinNumber"] = b.reference_bins;
  w.variables["warpedBinNumber"] = b.warped_bins;
  w.variables["jointBinNumber"] = static_cast<double>(b.reference_bins) * b.warped_bins;
  w.variables["referenceScale"] = b.reference.scale;
  w.variables["referenceOffset"] = b.reference.offset;
  w.variables["warpedScale"] = b.warped.scale;
  w.variables["warpedOffset"] = b.warped.offset;
}

NmiBinning read_binning(const fitness::Workload& w, const char* who) {
  NmiBinning b;
  b.reference_bins = workload_int(w, "referenceBinNumber", who);
  b.warped_bins = workload_int(w, "warpedBinNumber", who);
  auto real = [&](const char* name) {
    const auto it = w.variables.find(name);
    if (it == w.variables.end())
      throw std::runtime_error(std::string(who) + " reference: the workload has no variable '" + name + "'");
    return static_cast<float>(it->second);
  };
  b.reference = BinRescaling{real("referenceScale"), real("referenceOffset")};
  b.warped = BinRescaling{real("warpedScale"), real("warpedOffset")};
  if (b.reference_bins < 1 || b.warped_bins < 1)
    throw std::runtime_error(std::string(who) + " reference: the bin numbers must be positive");
  return b;
}

void add_to_joint_histogram(double reference_position, double warped_position, int reference_bins,
                            int warped_bins, double mass, std::vector<double>& histogram) {
  const ParzenWindow r = parzen_window(reference_position), w = parzen_window(warped_position);
  for (int a = 0; a < 4; ++a) {
    const int rb = r.first + a;
    if (rb < 0 || rb >= reference_bins) continue;
    for (int b = 0; b < 4; ++b) {
      const int wb = w.first + b;
      if (wb < 0 || wb >= warped_bins) continue;
      histogram[static_cast<std::size_t>(rb) * static_cast<std::size_t>(warped_bins) + static_cast<std::size_t>(wb)] +=
          mass * r.weight[static_cast<std::size_t>(a)] * w.weight[static_cast<std::size_t>(b)];
    }
  }
}

std::vector<double> joint_histogram(const std::vector<float>& reference, const std::vector<float>& warped,
                                    const std::vector<std::int32_t>& active, int reference_bins, int warped_bins,
                                    BinRescaling reference_rescaling, BinRescaling warped_rescaling) {
  std::vector<double> h(static_cast<std::size_t>(reference_bins) * static_cast<std::size_t>(warped_bins), 0.0);
  for (const std::int32_t i : active) {
    const auto k = static_cast<std::size_t>(i);
    add_to_joint_histogram(bin_position(reference[k], reference_rescaling), bin_position(warped[k], warped_rescaling),
                           reference_bins, warped_bins, 1.0, h);
  }
  return h;
}

NmiTables nmi_tables(const std::vector<double>& histogram, int reference_bins, int warped_bins) {
  const auto rb = static_cast<std::size_t>(reference_bins), wb = static_cast<std::size_t>(warped_bins);
  if (histogram.size() != rb * wb)
    throw std::runtime_error("nmi_tables: the histogram has " + std::to_string(histogram.size()) +
                             " bins, expected " + std::to_string(rb * wb));
  NmiTables t;
  for (const double v : histogram) t.total += v;
  if (!(t.total > 0)) throw std::runtime_error("nmi_tables: the joint histogram is empty");
  std::vector<double> ref_marginal(rb, 0.0), war_marginal(wb, 0.0);
  t.log_joint.assign(rb * wb, 0.0);
  for (std::size_t r = 0; r < rb; ++r)
    for (std::size_t w = 0; w < wb; ++w) {
      const double p = histogram[r * wb + w] / t.total;
      ref_marginal[r] += p;
      war_marginal[w] += p;
      if (p > 0) {
        t.log_joint[r * wb + w] = std::log(p);
        t.joint_entropy -= p * std::log(p);
      }
    }
  for (const double p : ref_marginal)
    if (p > 0) t.reference_entropy -= p * std::log(p);
  t.log_warped.assign(wb, 0.0);
  for (std::size_t w = 0; w < wb; ++w)
    if (war_marginal[w] > 0) {
      t.log_warped[w] = std::log(war_marginal[w]);
      t.warped_entropy -= war_marginal[w] * std::log(war_marginal[w]);
    }
  if (!(t.joint_entropy > 0))
    throw std::runtime_error("nmi_tables: the joint entropy is zero (all mass in one bin), NMI is undefined");
  t.nmi = (t.reference_entropy + t.warped_entropy) / t.joint_entropy;
  return t;
}

double nmi_intensity_derivative(double reference_position, double warped_position, int reference_bins,
                                int warped_bins, const std::vector<double>& log_joint,
                                const std::vector<double>& log_warped, double nmi, double joint_entropy,
                                double warped_scale) {
  const ParzenWindow r = parzen_window(reference_position), w = parzen_window(warped_position);
  double joint_sum = 0, warped_sum = 0;
  for (int b = 0; b < 4; ++b) {
    const int wb = w.first + b;
    if (wb < 0 || wb >= warped_bins) continue;
    warped_sum += w.derivative[static_cast<std::size_t>(b)] * log_warped[static_cast<std::size_t>(wb)];
    for (int a = 0; a < 4; ++a) {
      const int rb = r.first + a;
      if (rb < 0 || rb >= reference_bins) continue;
      joint_sum += r.weight[static_cast<std::size_t>(a)] * w.derivative[static_cast<std::size_t>(b)] *
                   log_joint[static_cast<std::size_t>(rb) * static_cast<std::size_t>(warped_bins) +
                             static_cast<std::size_t>(wb)];
    }
  }
  return (nmi * joint_sum - warped_sum) * warped_scale / joint_entropy;
}

// ---------------------------------------------------------------- LNCC

double lncc_at(const std::vector<float>& reference, const std::vector<float>& warped, Dim3 dims, int x, int y, int z,
               int radius) {
  const int x0 = std::max(0, x - radius), x1 = std::min(dims.x - 1, x + radius);
  const int y0 = std::max(0, y - radius), y1 = std::min(dims.y - 1, y + radius);
  const int z0 = std::max(0, z - radius), z1 = std::min(dims.z - 1, z + radius);
  // Sums of differences from the centre voxel (exact in double for float
  // intensities): a constant window gives exactly zero variance, as in the
  // kernel, and no large sums cancel.
  const double cr = reference[dims.index(x, y, z)], cw = warped[dims.index(x, y, z)];
  double n = 0, sr = 0, sw = 0, srr = 0, sww = 0, srw = 0;
  for (int Z = z0; Z <= z1; ++Z)
    for (int Y = y0; Y <= y1; ++Y)
      for (int X = x0; X <= x1; ++X) {
        const double r = reference[dims.index(X, Y, Z)] - cr, w = warped[dims.index(X, Y, Z)] - cw;
        sr += r;
        sw += w;
        srr += r * r;
        sww += w * w;
        srw += r * w;
        n += 1;
      }
  const double mr = sr / n, mw = sw / n;
  const double vr = srr / n - mr * mr, vw = sww / n - mw * mw, cov = srw / n - mr * mw;
  if (!(vr > 0) || !(vw > 0)) return 0.0;
  return cov / std::sqrt(vr * vw);
}

}  // namespace gi::seeds
