#include "seeds/common/brain_phantom.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "seeds/common/rng.hpp"

namespace gi::seeds {

namespace {

double mean_extent(Dim3 d) { return (d.x + d.y + d.z) / 3.0; }

}  // namespace

const std::vector<std::string>& mask_shape_names() {
  static const std::vector<std::string> names = {"brain", "full", "sphere", "slab", "shell"};
  return names;
}

MaskShape mask_shape_from_name(const std::string& name) {
  if (name == "brain") return MaskShape::Brain;
  if (name == "full") return MaskShape::Full;
  if (name == "sphere") return MaskShape::Sphere;
  if (name == "slab") return MaskShape::Slab;
  if (name == "shell") return MaskShape::Shell;
  throw std::runtime_error("unknown mask shape '" + name + "' (expected brain, full, sphere, slab or shell)");
}

BrainPhantom::BrainPhantom(Dim3 dims, std::uint64_t seed)
    : dims_(dims),
      shape_(dims, 0.2 * mean_extent(dims), seed, kStreamShapeNoise),
      folds_(dims, 0.045 * mean_extent(dims), seed, kStreamSulci) {
  Rng rng(seed, kStreamShape);
  // Head position and size vary a little between subjects.
  cx_ = (dims.x - 1) * rng.uniform(0.48, 0.52);
  cy_ = (dims.y - 1) * rng.uniform(0.48, 0.52);
  cz_ = (dims.z - 1) * rng.uniform(0.47, 0.53);
  const double scale = rng.uniform(0.97, 1.03);
  rx_ = 0.365 * dims.x * scale;  // left-right
  ry_ = 0.44 * dims.y * scale;  // anterior-posterior: the longest axis
  rz_ = 0.375 * dims.z * scale;  // inferior-superior
  fissure_half_width_ = std::max(0.6, 0.007 * dims.x);
}

double BrainPhantom::radius(int x, int y, int z) const {
  const double py = (y - cy_) / ry_;
  // Narrower in front, flatter below.
  const double px = (x - cx_) / (rx_ * (1.0 - 0.12 * std::max(0.0, py)));
  double pz = (z - cz_) / rz_;
  if (pz < 0) pz /= 0.82;
  const double r = std::sqrt(px * px + py * py + pz * pz);
  return r * (1.0 + 0.07 * shape_.at(x, y, z));
}

bool BrainPhantom::in_fold(int x, int y, int z, double r) const {
  // The interhemispheric fissure, from the top down to the corpus callosum.
  if (std::fabs(x - cx_) < fissure_half_width_ && (z - cz_) > -0.05 * rz_ && r > 0.3) return true;
  if (r < 0.7) return false;
  // Zero sets of a smooth noise field are folded sheets; keep a thin band of
  // them, wider towards the surface, like sulci opening outwards.
  const double width = 0.035 + 0.09 * (r - 0.7);
  return std::fabs(folds_.at(x, y, z)) < width;
}

std::vector<std::int32_t> active_voxels(Dim3 dims, MaskShape shape, std::uint64_t seed) {
  if (dims.voxels() > 0x7fffffffULL) throw std::runtime_error("active_voxels: image too large for int indices");
  std::vector<std::uint8_t> mask(dims.voxels(), 0);
  const double cx = (dims.x - 1) / 2.0, cy = (dims.y - 1) / 2.0, cz = (dims.z - 1) / 2.0;
  const double min_extent = std::min({dims.x, dims.y, dims.z});
  const double sphere_radius2 = (0.15 * min_extent) * (0.15 * min_extent);
  Rng rng(seed, kStreamShape);
  // A random unit normal for the slab.
  double nx = rng.uniform(-1, 1), ny = rng.uniform(-1, 1), nz = rng.uniform(0.5, 1);
  const double nn = std::sqrt(nx * nx + ny * ny + nz * nz);
  nx /= nn, ny /= nn, nz /= nn;
  std::unique_ptr<BrainPhantom> phantom;
  if (shape == MaskShape::Brain) phantom = std::make_unique<BrainPhantom>(dims, seed);
  const std::size_t slice = static_cast<std::size_t>(dims.x) * static_cast<std::size_t>(dims.y);
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t zz = z0; zz < z1; ++zz) {
      const int z = static_cast<int>(zz);
      for (int y = 0; y < dims.y; ++y) {
        std::uint8_t* row = mask.data() + zz * slice + static_cast<std::size_t>(y) * static_cast<std::size_t>(dims.x);
        for (int x = 0; x < dims.x; ++x) {
          const double dx = x - cx, dy = y - cy, dz = z - cz;
          bool on = false;
          switch (shape) {
            case MaskShape::Brain: on = phantom->in_brain(x, y, z); break;
            case MaskShape::Full: on = true; break;
            case MaskShape::Sphere: on = dx * dx + dy * dy + dz * dz <= sphere_radius2; break;
            case MaskShape::Slab: on = std::fabs(nx * dx + ny * dy + nz * dz) < 1.5; break;
            case MaskShape::Shell: {
              const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
              on = std::fabs(d - 0.35 * min_extent) < 1.0;
              break;
            }
          }
          row[x] = on ? 1 : 0;
        }
      }
    }
  });
  std::vector<std::int32_t> active;
  active.reserve(static_cast<std::size_t>(std::count(mask.begin(), mask.end(), std::uint8_t{1})));
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) active.push_back(static_cast<std::int32_t>(i));
  return active;
}

std::vector<float> tissue_image(Dim3 dims, std::uint64_t seed) {
  const BrainPhantom phantom(dims, seed);
  const SmoothNoise cortex(dims, 0.06 * mean_extent(dims), seed, kStreamTissue);
  const SmoothNoise bias(dims, 0.5 * mean_extent(dims), seed, kStreamBias);
  // Ventricles and deep grey matter as ellipsoids about the centre.
  const double cx = (dims.x - 1) / 2.0, cy = (dims.y - 1) / 2.0, cz = (dims.z - 1) / 2.0;
  const double sx = dims.x, sy = dims.y, sz = dims.z;
  auto inside = [](double dx, double dy, double dz, double ax, double ay, double az) {
    return (dx / ax) * (dx / ax) + (dy / ay) * (dy / ay) + (dz / az) * (dz / az) < 1.0;
  };
  std::vector<float> image(dims.voxels());
  const std::size_t slice = static_cast<std::size_t>(dims.x) * static_cast<std::size_t>(dims.y);
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t zz = z0; zz < z1; ++zz) {
      const int z = static_cast<int>(zz);
      for (int y = 0; y < dims.y; ++y) {
        for (int x = 0; x < dims.x; ++x) {
          const double r = phantom.radius(x, y, z);
          const double dx = x - cx, dy = y - cy, dz = z - cz;
          double mean;
          if (r > 1.22) mean = 0;                       // air
          else if (r > 1.12) mean = 65;                 // scalp
          else if (r > 1.03) mean = 12;                 // skull
          else if (r > 1.0 || phantom.in_fold(x, y, z, r)) mean = 28;  // CSF
          else if (inside(std::fabs(dx) - 0.04 * sx, dy - 0.02 * sy, dz - 0.06 * sz, 0.022 * sx, 0.12 * sy,
                          0.07 * sz))
            mean = 28;                                  // lateral ventricles
          else if (inside(dx, dy + 0.05 * sy, dz + 0.02 * sz, 0.08 * sx, 0.06 * sy, 0.05 * sz))
            mean = 92;                                  // thalamus
          else if (r > 0.8 + 0.05 * cortex.at(x, y, z)) mean = 78;  // cortical grey matter
          else mean = 118;                              // white matter
          const std::size_t i = zz * slice + static_cast<std::size_t>(y) * static_cast<std::size_t>(dims.x) +
                                static_cast<std::size_t>(x);
          const double noise = 2.0 * hash_normal(seed, kStreamTissueNoise, i);
          const double value = mean * (1.0 + 0.06 * bias.at(x, y, z)) + noise;
          image[i] = static_cast<float>(mean == 0 ? std::fabs(noise) : value);  // magnitude images are >= 0 in air
        }
      }
    }
  });
  return image;
}

void zero_outside_brain(std::vector<float>& image, Dim3 dims, std::uint64_t seed) {
  if (image.size() != dims.voxels())
    throw std::runtime_error("zero_outside_brain: the image holds " + std::to_string(image.size()) +
                             " voxels, its dimensions say " + std::to_string(dims.voxels()));
  const BrainPhantom phantom(dims, seed);
  parallel_for(static_cast<std::size_t>(dims.z), [&](std::size_t z0, std::size_t z1) {
    for (std::size_t z = z0; z < z1; ++z)
      for (int y = 0; y < dims.y; ++y)
        for (int x = 0; x < dims.x; ++x)
          if (!phantom.in_brain(x, y, static_cast<int>(z))) image[dims.index(x, y, static_cast<int>(z))] = 0.0f;
  });
}

}  // namespace gi::seeds
