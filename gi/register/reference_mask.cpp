#include "gi/register/reference_mask.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "gi/register/image_pyramid.hpp"

namespace gi::reg {

namespace {

std::string dim_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

}  // namespace

void check_reference_mask(const Volume& mask, const Volume& reference, const std::string& mask_name,
                          const std::string& reference_name) {
  if (mask.components != 1) throw std::runtime_error(mask_name + ": a mask must be a scalar image");
  if (mask.dim != reference.dim)
    throw std::runtime_error(mask_name + ": the mask (" + dim_text(mask.dim) + " voxels) is not on the voxel grid of " +
                             reference_name + " (" + dim_text(reference.dim) + ")");
  // The same grid means the same voxel-to-world matrix; a hundredth of a
  // millimetre (or of a unit direction) covers headers written in float.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      if (!(std::abs(mask.voxel_to_world[i][j] - reference.voxel_to_world[i][j]) <= 1e-2))
        throw std::runtime_error(mask_name + ": the mask's voxel-to-world matrix (sform/qform) differs from that of " +
                                 reference_name + ": it lies on another grid");
  if (std::any_of(mask.data.begin(), mask.data.end(), [](float v) { return !std::isfinite(v); }))
    throw std::runtime_error(mask_name + ": the mask holds a value that is not finite");
  if (std::all_of(mask.data.begin(), mask.data.end(), [](float v) { return v == 0.f; }))
    throw std::runtime_error(mask_name + ": the mask holds no voxel (every value is 0)");
}

std::vector<LevelMask> mask_pyramid(const KernelRunner& runner, const Volume& mask,
                                    const std::vector<std::array<int, 3>>& dims, const std::string& mask_name) {
  std::vector<float> binary(mask.data.size());
  std::transform(mask.data.begin(), mask.data.end(), binary.begin(), [](float v) { return v != 0.f ? 1.f : 0.f; });
  Buffer finest(runner.device(), binary.size() * 4);
  finest.upload(binary);
  const std::vector<Buffer> smoothed = image_pyramid(runner, std::move(finest), dims);
  std::vector<LevelMask> levels;
  for (std::size_t l = 0; l < dims.size(); ++l) {
    const std::vector<float> values = smoothed[l].download<float>();
    LevelMask level(values.size());
    std::transform(values.begin(), values.end(), level.begin(), [](float v) -> std::uint8_t { return v >= 0.5f; });
    if (std::find(level.begin(), level.end(), 1) == level.end())
      throw std::runtime_error(mask_name + ": the mask keeps no voxel at pyramid level " + std::to_string(l) + " (" +
                               dim_text(dims[l]) + " voxels); a larger mask or fewer --levels");
    levels.push_back(std::move(level));
  }
  return levels;
}

Buffer active_voxel_list(ComputeDevice& device, std::size_t voxels, const LevelMask* mask) {
  std::vector<int> list;
  if (mask) {
    list = voxels_in(*mask);
  } else {
    list.resize(voxels);
    std::iota(list.begin(), list.end(), 0);
  }
  Buffer b(device, list.size() * 4);
  b.upload(list);
  return b;
}

std::vector<int> voxels_in(const LevelMask& mask) {
  std::vector<int> in;
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) in.push_back(static_cast<int>(i));
  return in;
}

}  // namespace gi::reg
