// A registration test pair with a known smooth deformation (test_pair.hpp).
#include "gi/register/test_pair.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "fitness/process/atomic_file.hpp"
#include "gi/register/accuracy.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/source_hash.hpp"

namespace gi::reg {
namespace {
namespace fs = std::filesystem;

// Independent random streams from one seed (the field's components, the bias,
// each image's noise), so that each can be drawn in its own thread and a change
// to one part (e.g. its size) leaves the others as they were.
enum Stream : std::uint64_t {
  kFieldX = 0,  // kFieldY, kFieldZ follow
  kBias = 3,
  kReferenceNoise = 4,
  kFloatingNoise = 5,
  kLowFrequency = 6,  // the seed of the low-frequency field's own three streams
  kAffine = 7,        // the affine pair's rotation, translation and scaling
};

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  // SplitMix64 of the pair: nearby seeds and streams give unrelated engine states.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Standard normal values by Marsaglia's polar method from mt19937_64's raw
// output: unlike std::normal_distribution, the same on every standard library
// (and faster than Box-Muller's sin and cos; the field draws ~50 M values).
class Gaussian {
 public:
  explicit Gaussian(std::uint64_t seed) : engine_(seed) {}
  // Fills [out, out + n) with independent standard normal values.
  void fill(float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 2) {
      double a, b, s;
      do {  // a point uniform in the unit disc, not its centre
        a = double(engine_() >> 11) * 0x1.0p-52 - 1.0;
        b = double(engine_() >> 11) * 0x1.0p-52 - 1.0;
        s = a * a + b * b;
      } while (s >= 1.0 || s == 0.0);
      const double f = std::sqrt(-2.0 * std::log(s) / s);
      out[i] = float(a * f);
      if (i + 1 < n) out[i + 1] = float(b * f);
    }
  }

 private:
  std::mt19937_64 engine_;
};

// Runs body(begin, end) over [0, n) split across the machine's cores. Used
// only for work without random numbers, so results do not depend on the split.
void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  if (threads == 1 || n < 2) return body(0, n);
  std::vector<std::thread> pool;
  const std::size_t chunk = (n + threads - 1) / threads;
  for (std::size_t b = 0; b < n; b += chunk) pool.emplace_back(body, b, std::min(n, b + chunk));
  for (auto& t : pool) t.join();
}

// Half of a normalised Gaussian (w[0] the centre, w[k] = w[-k]), truncated at 3 sigma.
std::vector<float> gaussian_half_kernel(double sigma) {
  if (sigma <= 0) return {1.0f};
  const int radius = int(std::ceil(3.0 * sigma));
  std::vector<double> w(radius + 1);
  double sum = 0;
  for (int k = 0; k <= radius; ++k) sum += (k ? 2.0 : 1.0) * (w[k] = std::exp(-0.5 * k * k / (sigma * sigma)));
  std::vector<float> out;
  for (double x : w) out.push_back(float(x / sum));
  return out;
}

// dst[i] = sum over k in [-r, r] of w[|k|] * src[i + (k + r) * step], i < n:
// the kernel applied along one axis to n outputs at once (a row of x, or a
// whole z-plane). A 7 M-voxel field needs this fast: blocks of `Block` outputs
// are summed in a local array, which the compiler vectorises even at -O2 (no
// aliasing with dst, a fixed trip count). Small blocks suit lines close in
// memory (x, y); z-planes lie 160 KB apart, and there larger blocks read each
// plane in long sequential runs that the prefetchers follow.
template <std::size_t Block>
void convolve_lines(const float* src, std::size_t step, float* dst, std::size_t n, const std::vector<float>& w) {
  const int r = int(w.size()) - 1;
  const float* centre = src + std::size_t(r) * step;
  std::size_t i = 0;
  for (; i + Block <= n; i += Block) {
    float acc[Block];
    for (std::size_t j = 0; j < Block; ++j) acc[j] = w[0] * centre[i + j];
    for (int k = 1; k <= r; ++k) {
      const float wk = w[k];
      const float* lo = centre + i - std::size_t(k) * step;
      const float* hi = centre + i + std::size_t(k) * step;
      for (std::size_t j = 0; j < Block; ++j) acc[j] += wk * (lo[j] + hi[j]);
    }
    for (std::size_t j = 0; j < Block; ++j) dst[i + j] = acc[j];
  }
  for (; i < n; ++i) {
    float acc = w[0] * centre[i];
    for (int k = 1; k <= r; ++k) acc += w[k] * (centre[i - std::size_t(k) * step] + centre[i + std::size_t(k) * step]);
    dst[i] = acc;
  }
}

// One component of smooth_random_field: noise on the padded grid, smoothed
// along x, then y, then z, each pass keeping only the voxels with a full kernel.
std::vector<float> smooth_noise(const std::array<int, 3>& dim, const std::vector<float>& w, std::uint64_t seed) {
  const std::size_t r = w.size() - 1;
  const std::size_t nx = dim[0], ny = dim[1], nz = dim[2];
  const std::size_t px = nx + 2 * r, py = ny + 2 * r, pz = nz + 2 * r;
  std::vector<float> noise(px * py * pz);
  Gaussian(seed).fill(noise.data(), noise.size());
  // x: (px, py, pz) -> (nx, py, pz). Along x the "rows" are single voxels:
  // step 1 and n = nx per padded row.
  std::vector<float> a(nx * py * pz);
  for (std::size_t row = 0; row < py * pz; ++row) convolve_lines<8>(&noise[row * px], 1, &a[row * nx], nx, w);
  noise = {};
  // y: (nx, py, pz) -> (nx, ny, pz).
  std::vector<float> b(nx * ny * pz);
  for (std::size_t z = 0; z < pz; ++z)
    for (std::size_t y = 0; y < ny; ++y) convolve_lines<8>(&a[(z * py + y) * nx], nx, &b[(z * ny + y) * nx], nx, w);
  a = {};
  // z: (nx, ny, pz) -> (nx, ny, nz).
  std::vector<float> c(nx * ny * nz);
  for (std::size_t z = 0; z < nz; ++z) convolve_lines<512>(&b[z * ny * nx], nx * ny, &c[z * ny * nx], nx * ny, w);
  // Unit variance: each output is a weighted sum of independent unit normals
  // with weights w(i) w(j) w(k), whose variance is (sum of w^2)^3.
  double s2 = 0;
  for (std::size_t k = 0; k < w.size(); ++k) s2 += (k ? 2.0 : 1.0) * double(w[k]) * w[k];
  const float scale = float(1.0 / std::pow(s2, 1.5));
  for (float& v : c) v *= scale;
  return c;
}

// Cubic convolution (Keys, a = -0.5) weights for fraction t in [0, 1).
void cubic_weights(double t, double w[4]) {
  w[0] = ((-0.5 * t + 1.0) * t - 0.5) * t;
  w[1] = (1.5 * t - 2.5) * t * t + 1.0;
  w[2] = ((-1.5 * t + 2.0) * t + 0.5) * t;
  w[3] = (0.5 * t - 0.5) * t * t;
}

// The image at continuous voxel position p, edge voxels repeated outside.
double sample_cubic(const Volume& im, const double p[3]) {
  int base[3];
  double w[3][4];
  for (int a = 0; a < 3; ++a) {
    const double f = std::floor(p[a]);
    base[a] = int(f) - 1;
    cubic_weights(p[a] - f, w[a]);
  }
  // Inside the grid (nearly every voxel): the 4x4x4 neighbourhood without clamping.
  if (base[0] >= 0 && base[1] >= 0 && base[2] >= 0 && base[0] + 3 < im.dim[0] && base[1] + 3 < im.dim[1] &&
      base[2] + 3 < im.dim[2]) {
    const float* corner = &im.data[im.index(base[0], base[1], base[2])];
    const std::size_t sy = std::size_t(im.dim[0]), sz = sy * im.dim[1];
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int j = 0; j < 4; ++j) {
        const float* row = corner + k * sz + j * sy;
        s += w[1][j] * (w[0][0] * row[0] + w[0][1] * row[1] + w[0][2] * row[2] + w[0][3] * row[3]);
      }
      sum += w[2][k] * s;
    }
    return sum;
  }
  auto clamp = [](int i, int n) { return std::clamp(i, 0, n - 1); };
  double sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int z = clamp(base[2] + k, im.dim[2]);
    double sy = 0;
    for (int j = 0; j < 4; ++j) {
      const int y = clamp(base[1] + j, im.dim[1]);
      const float* row = &im.data[im.index(0, y, z)];
      double sx = 0;
      for (int i = 0; i < 4; ++i) sx += w[0][i] * row[clamp(base[0] + i, im.dim[0])];
      sy += w[1][j] * sx;
    }
    sum += w[2][k] * sy;
  }
  return sum;
}

// Trilinear interpolation of a 0/1 image, 0 outside the grid (no brain there).
double sample_linear(const std::vector<unsigned char>& in, const std::array<int, 3>& dim, const double p[3]) {
  int base[3];
  double t[3];
  for (int a = 0; a < 3; ++a) {
    const double f = std::floor(p[a]);
    base[a] = int(f);
    t[a] = p[a] - f;
  }
  double sum = 0;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        const int x = base[0] + i, y = base[1] + j, z = base[2] + k;
        if (x < 0 || y < 0 || z < 0 || x >= dim[0] || y >= dim[1] || z >= dim[2]) continue;
        if (!in[(std::size_t(z) * dim[1] + y) * dim[0] + x]) continue;
        sum += (i ? t[0] : 1 - t[0]) * (j ? t[1] : 1 - t[1]) * (k ? t[2] : 1 - t[2]);
      }
  return sum;
}

// Calls f(x, y, z, v) for every voxel of z-slices [z0, z1).
template <class F>
void for_slices(const std::array<int, 3>& dim, std::size_t z0, std::size_t z1, F f) {
  for (int z = int(z0); z < int(z1); ++z)
    for (int y = 0; y < dim[1]; ++y)
      for (int x = 0; x < dim[0]; ++x) f(x, y, z, (std::size_t(z) * dim[1] + y) * dim[0] + x);
}

// The brain in reference space: `brain` (0/1, floating space) at x + scale * field(x).
std::vector<unsigned char> warp_mask(const std::vector<unsigned char>& brain, const Volume& field, double scale) {
  std::vector<unsigned char> out(field.voxels());
  const std::size_t n = field.voxels();
  parallel_for(field.dim[2], [&](std::size_t z0, std::size_t z1) {
    for_slices(field.dim, z0, z1, [&](int x, int y, int z, std::size_t v) {
      const double p[3] = {x + scale * field.data[v], y + scale * field.data[n + v], z + scale * field.data[2 * n + v]};
      out[v] = sample_linear(brain, field.dim, p) >= 0.5;
    });
  });
  return out;
}

double max_length_in(const Volume& field, const std::vector<unsigned char>& mask) {
  const std::size_t n = field.voxels();
  double m = 0;
  for (std::size_t v = 0; v < n; ++v)
    if (mask[v]) {
      const double a = field.data[v], b = field.data[n + v], c = field.data[2 * n + v];
      m = std::max(m, a * a + b * b + c * c);
    }
  return std::sqrt(m);
}

// exp(p(x)) for a random quadratic p without constant term in coordinates
// normalised to [-1, 1], scaled to max |p| = bias over the grid.
std::vector<float> bias_field(const std::array<int, 3>& dim, double bias, std::uint64_t seed) {
  const std::size_t n = std::size_t(dim[0]) * dim[1] * dim[2];
  std::vector<float> p(n, 0.0f);
  if (bias > 0) {
    float c[9];
    Gaussian(seed).fill(c, 9);
    double half[3];
    for (int a = 0; a < 3; ++a) half[a] = std::max(1.0, (dim[a] - 1) / 2.0);
    double peak = 0;
    for_slices(dim, 0, dim[2], [&](int x, int y, int z, std::size_t v) {
      const double q[3] = {(x - (dim[0] - 1) / 2.0) / half[0], (y - (dim[1] - 1) / 2.0) / half[1],
                           (z - (dim[2] - 1) / 2.0) / half[2]};
      const double value = c[0] * q[0] + c[1] * q[1] + c[2] * q[2] + c[3] * q[0] * q[0] + c[4] * q[1] * q[1] +
                           c[5] * q[2] * q[2] + c[6] * q[0] * q[1] + c[7] * q[0] * q[2] + c[8] * q[1] * q[2];
      p[v] = float(value);
      peak = std::max(peak, std::abs(value));
    });
    const double s = peak > 0 ? bias / peak : 0.0;
    for (float& x : p) x = float(x * s);
  }
  for (float& x : p) x = std::exp(x);
  return p;
}

// Adds weight * (the low-frequency field) to `field`: smooth_random_field on a
// grid kLowStep times coarser (sigma / kLowStep there), interpolated
// trilinearly. Drawn coarse because per-voxel noise for a sigma of ~40 voxels
// would need a grid padded by 120 voxels on every side; at that scale the
// interpolation changes nothing that matters.
void add_low_frequency(Volume& field, double sigma, double weight, std::uint64_t seed) {
  constexpr int kLowStep = 4;
  std::array<int, 3> coarse;
  for (int a = 0; a < 3; ++a) coarse[a] = (field.dim[a] - 1) / kLowStep + 2;
  const Volume low = smooth_random_field(coarse, sigma / kLowStep, seed);
  const std::size_t n = field.voxels(), m = low.voxels();
  parallel_for(field.dim[2], [&](std::size_t z0, std::size_t z1) {
    for_slices(field.dim, z0, z1, [&](int x, int y, int z, std::size_t v) {
      const int p[3] = {x, y, z};
      int b[3];
      double t[3];
      for (int a = 0; a < 3; ++a) {
        b[a] = p[a] / kLowStep;
        t[a] = double(p[a] % kLowStep) / kLowStep;
      }
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (int k = 0; k < 2; ++k)
          for (int j = 0; j < 2; ++j)
            for (int i = 0; i < 2; ++i)
              sum += (i ? t[0] : 1 - t[0]) * (j ? t[1] : 1 - t[1]) * (k ? t[2] : 1 - t[2]) *
                     low.data[c * m + low.index(b[0] + i, b[1] + j, b[2] + k)];
        field.data[c * n + v] = float(field.data[c * n + v] + weight * sum);
      }
    });
  });
}

// --- The affine pair (test_pair.hpp) ---

// The floating grid's margin beyond the moved field of view, in its voxels:
// room for the cubic kernel and for displacements at the brain's edge.
constexpr int kFloatingMargin = 3;

// A uniform value in [0, 1) from the engine's top 53 bits: unlike
// std::uniform_real_distribution, the same on every standard library.
double uniform01(std::mt19937_64& engine) { return double(engine() >> 11) * 0x1.0p-53; }

// A direction uniform on the unit sphere (Archimedes: z uniform in [-1, 1]).
Point3 random_direction(std::mt19937_64& engine) {
  const double z = 2 * uniform01(engine) - 1;
  const double phi = 2 * std::numbers::pi * uniform01(engine);
  const double r = std::sqrt(std::max(0.0, 1 - z * z));
  return {r * std::cos(phi), r * std::sin(phi), z};
}

// A(w) = c + t + R S (w - c), R by Rodrigues' formula from the axis and angle.
Matrix4 affine_matrix(const PairAffine& a) {
  Matrix4 m = rotation_about(a.axis, a.rotation_degrees);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] *= a.scaling[j];
  for (int i = 0; i < 3; ++i) {
    m[i][3] = a.centre[i] + a.translation[i];
    for (int j = 0; j < 3; ++j) m[i][3] -= m[i][j] * a.centre[j];
  }
  return m;
}

// Draws the affine from its own stream, always the same number of values in
// the same order, so a bound of 0 leaves the other parameters as they were.
// The rotation angle and the translation's length are uniform in [max / 2,
// max], not [0, max]: every seed's pair then needs a real pre-alignment (with
// [0, max], seed 1 drew a translation of 0.1 mm).
PairAffine draw_affine(const PairOptions& o, const Point3& centre, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  PairAffine a;
  a.centre = centre;
  a.axis = random_direction(engine);
  a.rotation_degrees = o.affine_rotation * (1 + uniform01(engine)) / 2;
  const Point3 direction = random_direction(engine);
  const double length = o.affine_translation * (1 + uniform01(engine)) / 2;
  for (int i = 0; i < 3; ++i) a.translation[i] = length * direction[i];
  for (int i = 0; i < 3; ++i) a.scaling[i] = 1 + o.affine_scaling * (2 * uniform01(engine) - 1);
  a.matrix = affine_matrix(a);
  return a;
}

// The centroid of the brain's voxels, in world millimetres.
Point3 brain_centre(const std::vector<unsigned char>& brain, const Volume& image) {
  double sum[3] = {0, 0, 0};
  std::size_t count = 0;
  for_slices(image.dim, 0, image.dim[2], [&](int x, int y, int z, std::size_t v) {
    if (!brain[v]) return;
    sum[0] += x, sum[1] += y, sum[2] += z;
    ++count;
  });
  return transform_point(image.voxel_to_world, {sum[0] / count, sum[1] / count, sum[2] / count});
}

// An empty volume on the floating grid: V0's axis directions (its columns
// normalised), voxels of h mm, and the origin and dimensions that hold the
// source's voxel centres mapped by A, plus kFloatingMargin voxels each side.
Volume floating_grid(const Volume& image, const Matrix4& A, double h) {
  Matrix4 steps = identity4();  // voxel index -> world, origin at world 0 until the end
  for (int c = 0; c < 3; ++c) {
    const double norm = std::hypot(image.voxel_to_world[0][c], image.voxel_to_world[1][c], image.voxel_to_world[2][c]);
    for (int r = 0; r < 3; ++r) steps[r][c] = image.voxel_to_world[r][c] / norm * h;
  }
  const Matrix4 to_index = multiply(inverse(steps), multiply(A, image.voxel_to_world));
  Point3 lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (int corner = 0; corner < 8; ++corner) {
    Point3 p;
    for (int a = 0; a < 3; ++a) p[a] = (corner >> a & 1) ? image.dim[a] - 1 : 0;
    const Point3 q = transform_point(to_index, p);
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], q[a]), hi[a] = std::max(hi[a], q[a]);
  }
  Point3 start, size;
  for (int a = 0; a < 3; ++a) {
    start[a] = std::floor(lo[a]) - kFloatingMargin;
    size[a] = std::ceil(hi[a]) + kFloatingMargin - start[a] + 1;
  }
  if (size[0] * size[1] * size[2] > 1e9)
    throw std::invalid_argument("make_test_pair: the floating grid would be too large");
  Volume grid;
  for (int a = 0; a < 3; ++a) grid.dim[a] = int(size[a]), grid.spacing[a] = h;
  // Floating voxel 0 is the index-frame point `start`; steps has no translation, so this is its world position.
  const Point3 origin = transform_point(steps, start);
  grid.voxel_to_world = steps;
  for (int r = 0; r < 3; ++r) grid.voxel_to_world[r][3] = origin[r];
  return grid;
}

// The floating image without noise: F(y) = image(V0^-1 A^-1 Vf y).
Volume resample_floating(const Volume& image, const Matrix4& A, double h) {
  Volume out = floating_grid(image, A, h);
  const Matrix4 to_source = multiply(inverse(image.voxel_to_world), multiply(inverse(A), out.voxel_to_world));
  out.data.resize(out.voxels());
  parallel_for(out.dim[2], [&](std::size_t z0, std::size_t z1) {
    for_slices(out.dim, z0, z1, [&](int x, int y, int z, std::size_t v) {
      const Point3 p = transform_point(to_source, {double(x), double(y), double(z)});
      out.data[v] = float(sample_cubic(image, p.data()));
    });
  });
  return out;
}

// truth <- V0^-1 A V0 (x + truth(x)) - x: from u to the displacement whose
// reference-grid point x + d is the floating world point A V0 (x + u), in
// reference voxels.
void compose_with_affine(Volume& truth, const Matrix4& A) {
  const Matrix4 k = multiply(inverse(truth.voxel_to_world), multiply(A, truth.voxel_to_world));
  const std::size_t n = truth.voxels();
  parallel_for(truth.dim[2], [&](std::size_t z0, std::size_t z1) {
    for_slices(truth.dim, z0, z1, [&](int x, int y, int z, std::size_t v) {
      const Point3 p = {x + double(truth.data[v]), y + double(truth.data[n + v]), z + double(truth.data[2 * n + v])};
      const Point3 q = transform_point(k, p);
      truth.data[v] = float(q[0] - x);
      truth.data[n + v] = float(q[1] - y);
      truth.data[2 * n + v] = float(q[2] - z);
    });
  });
}

void check_affine_options(const PairOptions& o) {
  if (!(o.affine_rotation >= 0 && o.affine_rotation <= 90))
    throw std::invalid_argument("make_test_pair: affine_rotation must be in [0, 90] degrees");
  if (!(o.affine_translation >= 0 && o.affine_translation <= 1000))
    throw std::invalid_argument("make_test_pair: affine_translation must be in [0, 1000] mm");
  if (!(o.affine_scaling >= 0 && o.affine_scaling <= 0.5))
    throw std::invalid_argument("make_test_pair: affine_scaling must be in [0, 0.5]");
  if (!(o.floating_voxel >= 0.1 && o.floating_voxel <= 20))
    throw std::invalid_argument("make_test_pair: floating_voxel must be in [0.1, 20] mm");
}

// What an affine pair adds to pair.json (test_pair.hpp): its options, the
// affine, the floating grid, and the conventions and construction that differ.
void add_affine_json(nlohmann::json& j, const TestPair& pair, const PairOptions& o) {
  const PairAffine& a = pair.affine;
  j["options"]["affine"] = true;
  j["options"]["affine_max_rotation_degrees"] = o.affine_rotation;
  j["options"]["affine_max_translation_mm"] = o.affine_translation;
  j["options"]["affine_max_scaling"] = o.affine_scaling;
  j["options"]["floating_voxel_mm"] = o.floating_voxel;
  j["affine"] = {{"matrix", a.matrix},
                 {"maps", "reference world mm -> floating world mm (row-major, last row 0 0 0 1)"},
                 {"form", "A(w) = centre + translation + R(axis, rotation) diag(scaling) (w - centre)"},
                 {"centre_mm", a.centre},
                 {"axis", a.axis},
                 {"rotation_degrees", a.rotation_degrees},
                 {"translation_mm", a.translation},
                 {"scaling", a.scaling},
                 {"bounds", "rotation angle uniform in [max/2, max] about an axis uniform on the sphere; "
                            "translation length uniform in [max/2, max] mm in a direction uniform on the sphere; "
                            "each scale uniform in [1 - max, 1 + max]"}};
  j["grid"]["voxel_to_world"] = pair.reference.voxel_to_world;
  j["floating_grid"] = {{"dim", pair.floating.dim},
                        {"spacing_mm", pair.floating.spacing},
                        {"voxel_to_world", pair.floating.voxel_to_world},
                        {"margin_voxels", kFloatingMargin}};
  j["convention"] =
      "truth_displacement d: 3 components in voxels of the reference grid; reference voxel x corresponds to the "
      "floating WORLD point V_ref (x + d(x)), V_ref the reference's voxel_to_world (the floating voxel "
      "V_flo^-1 V_ref (x + d(x))); d(x) = V_ref^-1 A V_ref (x + u(x)) - x; the images lie on different grids";
  j["construction"]["truth"] = j["construction"]["truth"].get<std::string>() +
                               "; then composed with the affine: d(x) = V_ref^-1 A V_ref (x + u(x)) - x";
  j["construction"]["floating"] =
      "source image at V_src^-1 A^-1 V_flo y, cubic convolution (Keys a = -0.5, edge voxels repeated outside the "
      "source), on the floating grid (V_src's axes, floating_voxel_mm voxels, covering the source's voxel centres "
      "mapped by A plus margin_voxels), plus Gaussian noise";
  j["truth_in_brain"]["of"] = "u, before the affine";
  j["files"]["truth_affine"] = "truth_affine.txt";
}

}  // namespace

Volume smooth_random_field(const std::array<int, 3>& dim, double sigma, std::uint64_t seed) {
  if (dim[0] < 1 || dim[1] < 1 || dim[2] < 1) throw std::invalid_argument("smooth_random_field: empty grid");
  // The noise grid is padded by 3 sigma on every side: beyond 50 voxels a
  // Colin27-sized field would need gigabytes.
  if (!(sigma >= 0 && sigma <= 50)) throw std::invalid_argument("smooth_random_field: sigma outside [0, 50] voxels");
  Volume field;
  field.dim = dim;
  field.components = 3;
  field.data.resize(3 * field.voxels());
  const std::vector<float> w = gaussian_half_kernel(sigma);
  // One thread per component: each has its own random stream, so the result
  // does not depend on the scheduling.
  std::vector<std::thread> threads;
  for (std::uint64_t c = 0; c < 3; ++c)
    threads.emplace_back([&, c] {
      const std::vector<float> comp = smooth_noise(dim, w, stream_seed(seed, kFieldX + c));
      std::copy(comp.begin(), comp.end(), field.data.begin() + std::ptrdiff_t(c * field.voxels()));
    });
  for (auto& t : threads) t.join();
  return field;
}

TestPair make_test_pair(const Volume& image, const Volume& brain, const PairOptions& o) {
  if (image.components != 1 || brain.components != 1)
    throw std::invalid_argument("make_test_pair: the image and the brain must be scalar images");
  if (image.dim != brain.dim) throw std::invalid_argument("make_test_pair: the image and the brain differ in grid");
  if (image.voxels() == 0 || image.data.size() != image.voxels() || brain.data.size() != brain.voxels())
    throw std::invalid_argument("make_test_pair: empty or inconsistent image");
  if (!(o.max_displacement >= 0 && o.max_displacement < 1e4))
    throw std::invalid_argument("make_test_pair: max_displacement must be in [0, 1e4) voxels");
  if (!(o.noise >= 0 && o.noise <= 10)) throw std::invalid_argument("make_test_pair: noise must be in [0, 10]");
  if (!(o.bias >= 0 && o.bias <= 2)) throw std::invalid_argument("make_test_pair: bias must be in [0, 2]");
  if (!(o.low_frequency >= 0 && o.low_frequency <= 100))
    throw std::invalid_argument("make_test_pair: low_frequency must be in [0, 100]");
  if (!(o.low_frequency_sigma > 0 && o.low_frequency_sigma <= 200))
    throw std::invalid_argument("make_test_pair: low_frequency_sigma must be in (0, 200] voxels");
  check_affine_options(o);
  const std::size_t n = image.voxels();

  // The brain in floating space and the image's intensity range there (the noise's unit).
  std::vector<unsigned char> brain_mask(n);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t v = 0; v < n; ++v)
    if ((brain_mask[v] = brain.data[v] > 0)) {
      lo = std::min(lo, double(image.data[v]));
      hi = std::max(hi, double(image.data[v]));
    }
  if (!(hi >= lo)) throw std::invalid_argument("make_test_pair: the brain image has no voxel > 0");

  TestPair pair;
  pair.stats.intensity_range = hi - lo;
  pair.stats.noise_sigma = o.noise * (hi - lo);
  pair.truth = smooth_random_field(image.dim, o.sigma, o.seed);
  if (o.low_frequency > 0)
    add_low_frequency(pair.truth, o.low_frequency_sigma, o.low_frequency, stream_seed(o.seed, kLowFrequency));
  pair.truth.spacing = image.spacing;
  pair.truth.voxel_to_world = image.voxel_to_world;

  // Scale to max |u| = max_displacement inside the brain in reference space.
  // That mask depends on the scale, so iterate: start from the floating-space
  // brain, re-measure over the mask the scaled field gives, until the scale
  // stops changing (2-4 rounds; only voxels at the brain's edge move).
  double scale = 0;
  std::vector<unsigned char> mask = brain_mask;
  if (o.max_displacement > 0) {
    const double first = max_length_in(pair.truth, brain_mask);
    if (!(first > 0)) throw std::runtime_error("make_test_pair: the random field is zero inside the brain");
    scale = o.max_displacement / first;
    for (int round = 0; round < 20; ++round) {
      mask = warp_mask(brain_mask, pair.truth, scale);
      const double m = max_length_in(pair.truth, mask);
      if (!(m > 0)) throw std::runtime_error("make_test_pair: the brain mask is empty in reference space");
      const double next = o.max_displacement / m;
      const bool same = std::abs(next - scale) <= 1e-12 * scale;
      scale = next;
      if (same) break;
    }
  }
  for (float& x : pair.truth.data) x = float(x * scale);
  mask = warp_mask(brain_mask, pair.truth, 1.0);

  // No folding: the truth must be a one-to-one map.
  const std::vector<float> det = jacobian_determinants(pair.truth);
  const auto worst = std::min_element(det.begin(), det.end());
  pair.stats.min_jacobian = *worst;
  pair.stats.min_jacobian_in_brain = std::numeric_limits<double>::infinity();
  for (std::size_t v = 0; v < n; ++v)
    if (mask[v]) pair.stats.min_jacobian_in_brain = std::min(pair.stats.min_jacobian_in_brain, double(det[v]));
  if (!(*worst > 0)) {
    const std::size_t v = std::size_t(worst - det.begin());
    const std::size_t x = v % image.dim[0], y = v / image.dim[0] % image.dim[1], z = v / image.dim[0] / image.dim[1];
    throw std::runtime_error("make_test_pair: the truth displacement folds: det(I + grad u) = " +
                             std::to_string(*worst) + " at voxel (" + std::to_string(x) + ", " + std::to_string(y) +
                             ", " + std::to_string(z) + "); use a larger sigma or a smaller max displacement");
  }

  // Statistics of |u| inside the brain.
  std::vector<float> lengths;
  for (std::size_t v = 0; v < n; ++v)
    if (mask[v]) {
      const double a = pair.truth.data[v], b = pair.truth.data[n + v], c = pair.truth.data[2 * n + v];
      lengths.push_back(float(std::sqrt(a * a + b * b + c * c)));
    }
  const Summary s = summarise(std::move(lengths));
  pair.stats.brain_voxels = s.count;
  pair.stats.mean_displacement = s.mean;
  pair.stats.p95_displacement = s.p95;
  pair.stats.max_displacement = s.max;

  // The images: same grid and geometry as the source image.
  Volume geometry = image;
  geometry.data.clear();
  pair.floating = pair.reference = pair.mask = geometry;
  pair.mask.data.assign(mask.begin(), mask.end());
  const std::vector<float> bias = bias_field(image.dim, o.bias, stream_seed(o.seed, kBias));
  pair.reference.data.resize(n);
  parallel_for(image.dim[2], [&](std::size_t z0, std::size_t z1) {
    for_slices(image.dim, z0, z1, [&](int x, int y, int z, std::size_t v) {
      const double p[3] = {x + pair.truth.data[v], y + pair.truth.data[n + v], z + pair.truth.data[2 * n + v]};
      pair.reference.data[v] = float(sample_cubic(image, p) * bias[v]);
    });
  });
  pair.local = pair.truth;
  if (o.affine) {
    // After the statistics and the fold check, which stay those of u; the
    // reference does not depend on A, nor the draws of the other streams.
    pair.affine = draw_affine(o, brain_centre(brain_mask, image), stream_seed(o.seed, kAffine));
    pair.floating = resample_floating(image, pair.affine.matrix, o.floating_voxel);
    compose_with_affine(pair.truth, pair.affine.matrix);
  } else {
    pair.floating.data = image.data;
  }
  // Each image's noise from its own stream, drawn in its own thread.
  auto add_noise = [&](std::vector<float>& data, std::uint64_t stream) {
    if (pair.stats.noise_sigma <= 0) return;
    std::vector<float> noise(data.size());
    Gaussian(stream_seed(o.seed, stream)).fill(noise.data(), noise.size());
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = float(data[i] + pair.stats.noise_sigma * noise[i]);
  };
  std::thread ref_noise(add_noise, std::ref(pair.reference.data), std::uint64_t(kReferenceNoise));
  add_noise(pair.floating.data, kFloatingNoise);
  ref_noise.join();
  return pair;
}

nlohmann::json pair_json(const TestPair& pair, const PairOptions& o, const fs::path& image_file,
                         const fs::path& brain_file) {
  const auto& s = pair.stats;
  auto source = [](const fs::path& f) {
    return nlohmann::json{{"path", fs::absolute(f).lexically_normal().string()}, {"sha256", grammar::sha256_hex(read_text_file(f))}};
  };
  nlohmann::json j = {
      {"format", "gi-test-pair-1"},
      {"seed", o.seed},
      {"options",
       {{"max_displacement_voxels", o.max_displacement},
        {"sigma_voxels", o.sigma},
        {"low_frequency_weight", o.low_frequency},
        {"low_frequency_sigma_voxels", o.low_frequency_sigma},
        {"noise_fraction_of_brain_range", o.noise},
        {"bias_max_abs_log", o.bias}}},
      {"convention",
       "truth_displacement: 3 components in voxels of the reference grid; reference voxel x corresponds to the "
       "floating image's voxel position x + u(x); both images share one grid"},
      {"construction",
       {{"truth", "per-voxel Gaussian white noise, separable Gaussian smoothing (truncated at 3 sigma), plus "
                  "low_frequency_weight times a field smoothed by low_frequency_sigma (drawn on a 4x coarser grid, "
                  "trilinear), scaled to max |u| in the reference-space brain = max_displacement"},
        {"reference", "floating source image at x + u(x), cubic convolution (Keys a = -0.5), times exp(quadratic "
                      "polynomial, max |p| = bias), plus Gaussian noise"},
        {"floating", "source image plus Gaussian noise"},
        {"mask", "(brain > 0) at x + u(x), trilinear, >= 0.5"},
        {"random", "std::mt19937_64 streams from the seed (SplitMix64), normals by the Marsaglia polar method"}}},
      {"grid", {{"dim", pair.reference.dim}, {"spacing_mm", pair.reference.spacing}}},
      {"truth_in_brain",
       {{"voxels", s.brain_voxels},
        {"mean", s.mean_displacement},
        {"p95", s.p95_displacement},
        {"max", s.max_displacement},
        {"units", "voxels"},
        {"percentile_rule", "nearest rank"}}},
      {"min_jacobian", s.min_jacobian},
      {"min_jacobian_in_brain", s.min_jacobian_in_brain},
      {"intensity_range_in_brain", s.intensity_range},
      {"noise_sigma", s.noise_sigma},
      {"sources", {{"image", source(image_file)}, {"brain", source(brain_file)}}},
      {"files",
       {{"reference", "reference.nii.gz"},
        {"floating", "floating.nii.gz"},
        {"truth_displacement", "truth_displacement.nii.gz"},
        {"brain_mask", "brain_mask.nii.gz"}}},
  };
  // The plain pair's pair.json stays as it was; an affine pair adds to it.
  if (o.affine) add_affine_json(j, pair, o);
  return j;
}

void write_test_pair(const fs::path& dir, const TestPair& pair, const PairOptions& o, const fs::path& image_file,
                     const fs::path& brain_file) {
  fs::create_directories(dir);
  const nlohmann::json meta = pair_json(pair, o, image_file, brain_file);
  const std::string seed = "seed " + std::to_string(o.seed);
  write_nifti(dir / "reference.nii.gz", pair.reference, "gi test pair reference, " + seed);
  write_nifti(dir / "floating.nii.gz", pair.floating, "gi test pair floating, " + seed);
  write_nifti(dir / "truth_displacement.nii.gz", pair.truth, "gi truth displacement (voxels), " + seed);
  write_nifti(dir / "brain_mask.nii.gz", pair.mask, "gi brain mask (reference space), " + seed);
  if (o.affine) fitness::write_file_atomically(dir / "truth_affine.txt", matrix_text(pair.affine.matrix));
  fitness::write_file_atomically(dir / "pair.json", meta.dump(2) + "\n");
}

}  // namespace gi::reg
