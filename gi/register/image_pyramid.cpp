#include "gi/register/image_pyramid.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace gi::reg {

std::array<int, 3> half(const std::array<int, 3>& d) { return {(d[0] + 1) / 2, (d[1] + 1) / 2, (d[2] + 1) / 2}; }

std::vector<std::array<int, 3>> pyramid_dims(std::array<int, 3> finest, int levels) {
  std::vector<std::array<int, 3>> dims{finest};
  for (int l = 1; l < levels; ++l) dims.push_back(half(dims.back()));
  return dims;
}

Buffer rescaled(const KernelRunner& runner, const Buffer& image, std::size_t voxels, const char* what) {
  const float inf = std::numeric_limits<float>::infinity();
  Buffer range(runner.device(), 8);
  range.upload(std::vector<float>{inf, -inf});
  const double n = static_cast<double>(voxels);
  runner.run("tools/intensity_minmax", {{"image", &image}, {"minMax", &range}}, {{"voxelNumber", n}});
  const std::vector<float> mm = range.download<float>();
  if (!(mm[1] > mm[0])) throw std::runtime_error(std::string("the ") + what + " image is constant");
  Buffer out(runner.device(), voxels * 4);
  runner.run("tools/intensity_rescale", {{"image", &image}, {"rescaled", &out}},
             {{"voxelNumber", n}, {"inputMin", mm[0]}, {"inputMax", mm[1]}, {"newMin", 0}, {"newMax", 1}});
  return out;
}

namespace {

// One pyramid level down: the binomial smoothing, then every second voxel.
Buffer decimated(const KernelRunner& runner, const Buffer& image, std::array<int, 3> dim, const Buffer& weights) {
  const std::array<int, 3> out_dim = half(dim);
  Buffer out(runner.device(), product(out_dim) * 4);
  runner.run("tools/pyramid_level", {{"input", &image}, {"kernelWeights", &weights}, {"output", &out}},
             {{"inputDimX", dim[0]}, {"inputDimY", dim[1]}, {"inputDimZ", dim[2]},
              {"inputVoxelNumber", static_cast<double>(product(dim))}, {"kernelSize", 5}, {"kernelRadius", 2},
              {"outputDimX", out_dim[0]}, {"outputDimY", out_dim[1]}, {"outputDimZ", out_dim[2]},
              {"outputVoxelNumber", static_cast<double>(product(out_dim))}});
  return out;
}

}  // namespace

std::vector<Buffer> image_pyramid(const KernelRunner& runner, Buffer finest, const std::vector<std::array<int, 3>>& dims) {
  Buffer weights(runner.device(), 5 * 4);
  weights.upload(std::vector<float>{1.f / 16, 4.f / 16, 6.f / 16, 4.f / 16, 1.f / 16});
  std::vector<Buffer> levels;
  levels.push_back(std::move(finest));
  for (std::size_t l = 1; l < dims.size(); ++l) levels.push_back(decimated(runner, levels.back(), dims[l - 1], weights));
  return levels;
}

}  // namespace gi::reg
