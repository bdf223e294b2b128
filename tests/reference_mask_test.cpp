// The reference mask of gi register (gi/register/reference_mask.hpp): what
// makes a mask unusable, and its pyramid on the CPU emulator. Registrations
// with a mask: tests/registration_test.cpp and tests/affine_stage_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gi/register/emulated_device.hpp"
#include "gi/register/image_pyramid.hpp"
#include "gi/register/kernel_set.hpp"
#include "gi/register/reference_mask.hpp"
#include "tests/test_support.hpp"

namespace gi::reg {
namespace {

Volume cube(int n, float value) {
  Volume v;
  v.dim = {n, n, n};
  v.data.assign(v.voxels(), value);
  return v;
}

// The message of check_reference_mask's refusal, or "" when it accepts.
std::string refusal(const Volume& mask, const Volume& reference) {
  try {
    check_reference_mask(mask, reference, "m.nii.gz", "r.nii.gz");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ReferenceMask, RefusesAMaskItCannotUse) {
  const Volume reference = cube(8, 1.f);
  Volume mask = cube(8, 0.f);
  mask.data[17] = 2.f;  // any nonzero value is in
  EXPECT_EQ(refusal(mask, reference), "");

  Volume other = cube(6, 1.f);
  EXPECT_EQ(refusal(other, reference), "m.nii.gz: the mask (6x6x6 voxels) is not on the voxel grid of r.nii.gz (8x8x8)");
  Volume moved = mask;
  moved.voxel_to_world[0][3] = 0.5;  // half a voxel along x
  EXPECT_NE(refusal(moved, reference).find("m.nii.gz: the mask's voxel-to-world matrix (sform/qform) differs from that of "
                                           "r.nii.gz"),
            std::string::npos);
  Volume empty = cube(8, 0.f);
  EXPECT_EQ(refusal(empty, reference), "m.nii.gz: the mask holds no voxel (every value is 0)");
  Volume nan = mask;
  nan.data[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(refusal(nan, reference), "m.nii.gz: the mask holds a value that is not finite");
  Volume field = mask;
  field.components = 3;
  field.data.resize(3 * field.voxels());
  EXPECT_EQ(refusal(field, reference), "m.nii.gz: a mask must be a scalar image");
}

TEST(ReferenceMask, APyramidLevelKeepsWhereMostOfItsNeighbourhoodIsIn) {
  const KernelSet kernels({"tools/pyramid_level"}, {test::source_dir() / "seeds", std::nullopt, std::nullopt, ""});
  EmulatedDevice device;
  const KernelRunner runner(kernels, device);
  // A box of 8^3 voxels from 4 to 11 in a 16^3 image.
  Volume mask = cube(16, 0.f);
  for (int z = 4; z < 12; ++z)
    for (int y = 4; y < 12; ++y)
      for (int x = 4; x < 12; ++x) mask.at(x, y, z) = 1.f;
  const std::vector<LevelMask> levels = mask_pyramid(runner, mask, pyramid_dims(mask.dim, 2));
  ASSERT_EQ(levels.size(), 2u);
  for (std::size_t i = 0; i < mask.voxels(); ++i) ASSERT_EQ(levels[0][i], mask.data[i] != 0.f) << i;
  // Level 1 (8^3): voxel v stands for voxel 2v, smoothed by (1 4 6 4 1) / 16
  // along each axis. Along one axis the box gives 11/16 at v = 2 (voxel 4), 1
  // at 3 and 4, 15/16 at 5 and 5/16 at 6 (voxel 12); the smoothed mask is the
  // product over the axes. So {3, 4, 5}^3 is in, and so is a voxel with one
  // coordinate 2 (11/16 * (15/16)^2 at least); two 2s give 0.47: out.
  const auto at1 = [&](int x, int y, int z) { return levels[1][(std::size_t(z) * 8 + y) * 8 + x]; };
  for (int z = 3; z <= 5; ++z)
    for (int y = 3; y <= 5; ++y)
      for (int x = 3; x <= 5; ++x) EXPECT_EQ(at1(x, y, z), 1) << x << "," << y << "," << z;
  EXPECT_EQ(at1(2, 3, 3), 1) << "11/16 along x only: in";
  EXPECT_EQ(at1(2, 2, 3), 0) << "(11/16)^2 < 1/2: out";
  EXPECT_EQ(at1(1, 4, 4), 0);
  EXPECT_EQ(at1(6, 4, 4), 0) << "voxel 12 is outside the box: 5/16";
  EXPECT_EQ(voxels_in(levels[1]).size(), std::size_t(27 + 3 * 9));

  // A mask too small for a level is refused, naming the level.
  Volume speck = cube(16, 0.f);
  speck.at(5, 5, 5) = 1.f;
  try {
    mask_pyramid(runner, speck, pyramid_dims(speck.dim, 2), "speck.nii");
    FAIL() << "a mask with no voxel at level 1 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "speck.nii: the mask keeps no voxel at pyramid level 1 (8x8x8 voxels); a larger mask or fewer --levels");
  }
}

}  // namespace
}  // namespace gi::reg
