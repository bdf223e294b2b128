#pragma once
// A brain-shaped phantom for workloads that look like registration data: a
// deformed ellipsoid (flatter below, narrower in front) with sulci-like thin
// folds carved near its surface and an interhemispheric fissure, scaled to the
// image size. It gives the active-voxel mask and a tissue-like T1 intensity
// image (background, scalp, skull, CSF, grey and white matter, ventricles,
// deep grey matter; a smooth bias field and mild noise).
#include <cstdint>
#include <string>
#include <vector>

#include "seeds/common/smooth_noise.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds {

enum class MaskShape {
  Brain,   // the phantom's brain: about 2.1 M of 217^3 voxels
  Full,    // every voxel
  Sphere,  // a small ball (radius 0.15 of the smallest extent)
  Slab,    // a thin oblique sheet, 3 voxels thick
  Shell,   // a thin spherical shell, 2 voxels thick
};

const std::vector<std::string>& mask_shape_names();  // brain, full, sphere, slab, shell
MaskShape mask_shape_from_name(const std::string& name);  // throws on an unknown name

class BrainPhantom {
 public:
  BrainPhantom(Dim3 dims, std::uint64_t seed);

  // Normalised distance from the centre: < 1 inside the deformed brain surface.
  double radius(int x, int y, int z) const;
  // A fold of cerebrospinal fluid cutting into the brain at radius r.
  bool in_fold(int x, int y, int z, double r) const;
  bool in_brain(int x, int y, int z) const {
    const double r = radius(x, y, z);
    return r < 1.0 && !in_fold(x, y, z, r);
  }
  const Dim3& dims() const { return dims_; }

 private:
  Dim3 dims_;
  double cx_, cy_, cz_, rx_, ry_, rz_;
  double fissure_half_width_;
  SmoothNoise shape_, folds_;
};

// Sorted linear indices of the active voxels.
std::vector<std::int32_t> active_voxels(Dim3 dims, MaskShape shape, std::uint64_t seed);

// A T1-like intensity image of the phantom, roughly 0..140.
std::vector<float> tissue_image(Dim3 dims, std::uint64_t seed);

// Sets every voxel outside the brain of the phantom with this seed to exactly
// 0, as brain extraction (skull stripping) leaves an image: constant regions,
// which noisy tissue images never have.
void zero_outside_brain(std::vector<float>& image, Dim3 dims, std::uint64_t seed);

}  // namespace gi::seeds
