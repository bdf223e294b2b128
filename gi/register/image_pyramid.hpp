#pragma once
// The image pyramid of gi register (gi/register/registration.hpp), made on
// the device with the library's kernels: intensities rescaled to [0, 1]
// (tools/intensity_minmax, tools/intensity_rescale), then each level the
// previous one smoothed by the binomial (1 4 6 4 1) / 16 and decimated by two
// along every axis (tools/pyramid_level), as NiftyReg's pyramid.
#include <array>
#include <vector>

#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_runner.hpp"

namespace gi::reg {

// The size of the level above one of size `d`: every second voxel, the first kept.
std::array<int, 3> half(const std::array<int, 3>& d);

// `finest` and the sizes of the `levels` - 1 levels above it, finest first.
std::vector<std::array<int, 3>> pyramid_dims(std::array<int, 3> finest, int levels);

// `image` (`voxels` floats) rescaled to [0, 1]. Throws std::runtime_error
// when the image is constant, naming it by `what`.
Buffer rescaled(const KernelRunner& runner, const Buffer& image, std::size_t voxels, const char* what);

// The pyramid of `finest` (level 0, moved into the result) on the sizes of
// `dims` (pyramid_dims).
std::vector<Buffer> image_pyramid(const KernelRunner& runner, Buffer finest, const std::vector<std::array<int, 3>>& dims);

}  // namespace gi::reg
