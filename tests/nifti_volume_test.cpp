// NIfTI reading and writing (gi/register/nifti_volume.cpp): round trips, a
// real brain image, and every malformed file read_nifti must refuse with a
// message naming the file and the problem. Malformed files are written with
// nifticlib directly, as another tool would write them.
#include <gtest/gtest.h>
#include <nifti2_io.h>
#include <zlib.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gi/register/parallel_gzip.hpp"
#include "gi/register/volume.hpp"

namespace gi::reg {
namespace {

namespace fs = std::filesystem;

class NiftiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::path(::testing::TempDir()) /
           ("gi_nifti_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The message of the NiftiError `read` throws; fails the test if none.
  static std::string error_of(const std::function<void()>& read) {
    try {
      read();
    } catch (const NiftiError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no NiftiError";
    return {};
  }

  fs::path dir_;
};

// A volume whose values differ voxel to voxel (negative, fractional, -0), on
// an anisotropic, rotated and shifted grid.
Volume sample_volume(int components) {
  Volume v;
  v.dim = {7, 5, 4};
  v.components = components;
  v.spacing = {0.75, 1.25, 2.5};
  const double c = std::cos(0.3), s = std::sin(0.3);
  v.voxel_to_world = {{{c * 0.75, -s * 1.25, 0, -40.5}, {s * 0.75, c * 1.25, 0, 12.25}, {0, 0, 2.5, 3}, {0, 0, 0, 1}}};
  v.data.resize(v.voxels() * components);
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = float(std::sin(double(i)) * 1000.0 / 3.0);
  v.data[3] = -0.0f;
  return v;
}

// Writes a NIfTI-1 file with nifticlib: dims as nifticlib's dim[8], every
// value `fill(i)` stored as `datatype`, and `edit` may change the header.
void write_raw(const fs::path& file, std::vector<int64_t> dims, int datatype, const std::function<double(int64_t)>& fill,
               const std::function<void(nifti_image&)>& edit = {}) {
  dims.resize(8, 1);
  nifti_image* nim = nifti_make_new_nim(dims.data(), datatype, 1);
  ASSERT_NE(nim, nullptr);
  nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
  ASSERT_EQ(nifti_set_filenames(nim, file.c_str(), 0, 1), 0);
  for (int64_t i = 0; i < nim->nvox; ++i) {
    auto* p = static_cast<unsigned char*>(nim->data) + i * nim->nbyper;
    const double x = fill(i);
    switch (datatype) {
      case DT_UINT8: *p = static_cast<uint8_t>(x); break;
      case DT_INT16: { const auto y = static_cast<int16_t>(x); std::memcpy(p, &y, sizeof y); } break;
      case DT_FLOAT32: { const auto y = static_cast<float>(x); std::memcpy(p, &y, sizeof y); } break;
      case DT_FLOAT64: std::memcpy(p, &x, sizeof x); break;
      default: break;  // complex and RGB files stay zero: only their type matters
    }
  }
  if (edit) edit(*nim);
  nifti_image_write(nim);
  nifti_image_free(nim);
  ASSERT_TRUE(fs::exists(file));
}

void expect_same(const Volume& a, const Volume& b) {
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.components, b.components);
  for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(float(a.spacing[k]), float(b.spacing[k]));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(a.voxel_to_world[r][c], b.voxel_to_world[r][c], 1e-5) << r << "," << c;
  ASSERT_EQ(a.data.size(), b.data.size());
  EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)), 0) << "data not bit-exact";
}

TEST_F(NiftiTest, RoundTripScalarNii) {
  const Volume v = sample_volume(1);
  write_nifti(dir_ / "a.nii", v, "round trip");
  expect_same(v, read_nifti(dir_ / "a.nii"));
}

TEST_F(NiftiTest, RoundTripScalarNiiGz) {
  const Volume v = sample_volume(1);
  write_nifti(dir_ / "a.nii.gz", v);
  expect_same(v, read_nifti(dir_ / "a.nii.gz"));
}

// A volume large enough to be compressed in several pieces, one gzip member
// each (gi/register/parallel_gzip.hpp), reads back whole, through nifticlib
// and through zlib's gzread as other tools read it.
TEST_F(NiftiTest, RoundTripCompressedInParallelPieces) {
  Volume v = sample_volume(3);
  v.dim = {96, 80, 64};  // 5.9 MB of floats: 5 pieces of at least 1 MiB on 5 or more cores
  v.data.resize(v.voxels() * 3);
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = float(std::sin(double(i) * 0.37) * 1000.0);
  write_nifti(dir_ / "big.nii.gz", v);
  expect_same(v, read_nifti(dir_ / "big.nii.gz", 3));
  write_nifti(dir_ / "big.nii", v);
  const std::size_t written = gzip_file_parallel(dir_ / "big.nii", dir_ / "four.gz", 1, 4);
  EXPECT_EQ(written, fs::file_size(dir_ / "four.gz"));
  gzFile gz = gzopen((dir_ / "four.gz").c_str(), "rb");
  ASSERT_NE(gz, nullptr);
  std::vector<char> back(fs::file_size(dir_ / "big.nii") + 16);
  const int got = gzread(gz, back.data(), static_cast<unsigned>(back.size()));
  gzclose(gz);
  ASSERT_EQ(got, static_cast<int>(fs::file_size(dir_ / "big.nii")));
  std::ifstream raw(dir_ / "big.nii", std::ios::binary);
  const std::vector<char> expected((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  back.resize(got);
  EXPECT_EQ(back, expected);
  // Counting the members: each starts with the gzip magic 1f 8b 08.
  std::ifstream packed(dir_ / "four.gz", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(packed)), std::istreambuf_iterator<char>());
  int members = 0;
  for (std::size_t at = bytes.find("\x1f\x8b\x08"); at != std::string::npos; at = bytes.find("\x1f\x8b\x08", at + 1))
    ++members;
  EXPECT_GE(members, 4);
  EXPECT_THROW(gzip_file_parallel(dir_ / "big.nii", dir_ / "no-such-folder" / "x.gz", 1), std::runtime_error);
}

TEST_F(NiftiTest, RoundTripVectorField) {
  const Volume v = sample_volume(3);
  for (const char* name : {"f.nii", "f.nii.gz"}) {
    write_nifti(dir_ / name, v);
    expect_same(v, read_nifti(dir_ / name, 3));
  }
}

// What other tools see: float32, mm, both transforms, the vector intent, the description.
TEST_F(NiftiTest, WriteSetsHeaderFields) {
  write_nifti(dir_ / "f.nii.gz", sample_volume(3), std::string(100, 'd'));
  nifti_image* nim = nifti_image_read((dir_ / "f.nii.gz").c_str(), 0);
  ASSERT_NE(nim, nullptr);
  EXPECT_EQ(nim->nifti_type, NIFTI_FTYPE_NIFTI1_1);
  EXPECT_EQ(nim->datatype, DT_FLOAT32);
  EXPECT_EQ(nim->dim[0], 5);
  EXPECT_EQ(nim->dim[4], 1);
  EXPECT_EQ(nim->dim[5], 3);
  EXPECT_EQ(nim->intent_code, NIFTI_INTENT_VECTOR);
  EXPECT_EQ(nim->xyz_units, NIFTI_UNITS_MM);
  EXPECT_EQ(nim->sform_code, NIFTI_XFORM_SCANNER_ANAT);
  EXPECT_EQ(nim->qform_code, NIFTI_XFORM_SCANNER_ANAT);
  EXPECT_EQ(std::string(nim->descrip), std::string(79, 'd'));
  const Volume v = sample_volume(3);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(nim->qto_xyz.m[r][c], v.voxel_to_world[r][c], 1e-4);
  nifti_image_free(nim);
}

// A sheared grid has no qform: only the sform, not a contradicting qform.
TEST_F(NiftiTest, WriteLeavesOutAQformThatCannotHoldTheGrid) {
  Volume v = sample_volume(1);
  v.voxel_to_world = {{{0.75, 0.5, 0, 0}, {0, 1.25, 0, 0}, {0, 0, 2.5, 0}, {0, 0, 0, 1}}};
  write_nifti(dir_ / "s.nii", v);
  nifti_image* nim = nifti_image_read((dir_ / "s.nii").c_str(), 0);
  ASSERT_NE(nim, nullptr);
  EXPECT_EQ(nim->qform_code, 0);
  EXPECT_EQ(nim->sform_code, NIFTI_XFORM_SCANNER_ANAT);
  nifti_image_free(nim);
  expect_same(v, read_nifti(dir_ / "s.nii"));
}

// Only the final name is left, also after an overwrite and after a failure.
TEST_F(NiftiTest, WriteLeavesNoTemporaryFile) {
  write_nifti(dir_ / "a.nii.gz", sample_volume(1));
  write_nifti(dir_ / "a.nii.gz", sample_volume(1));
  Volume wrong = sample_volume(1);
  wrong.data.pop_back();
  const std::string message = error_of([&] { write_nifti(dir_ / "b.nii", wrong); });
  EXPECT_NE(message.find("b.nii"), std::string::npos) << message;
  EXPECT_NE(message.find("holds 139 values"), std::string::npos) << message;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"a.nii.gz"});
}

TEST_F(NiftiTest, WriteErrors) {
  const std::string missing = error_of([&] { write_nifti(dir_ / "no" / "a.nii", sample_volume(1)); });
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
  const std::string name = error_of([&] { write_nifti(dir_ / "a.img", sample_volume(1)); });
  EXPECT_NE(name.find(".nii or .nii.gz"), std::string::npos) << name;
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

// Colin27 (MNI space, 1 mm, uint8) from the Debian package mricron-data.
TEST_F(NiftiTest, ReadsColin27) {
  const fs::path file = "/usr/share/mricron/templates/ch2.nii.gz";
  if (!fs::exists(file)) GTEST_SKIP() << file << " missing: install the Debian package mricron-data";
  const Volume v = read_nifti(file);
  EXPECT_EQ(v.dim, (std::array<int, 3>{181, 217, 181}));
  EXPECT_EQ(v.spacing, (std::array<double, 3>{1, 1, 1}));
  EXPECT_EQ(v.voxel_to_world[0][3], -90);
  EXPECT_EQ(v.voxel_to_world[1][3], -125);
  EXPECT_EQ(v.voxel_to_world[2][3], -71);
  ASSERT_EQ(v.data.size(), v.voxels());
  float high = 0;
  for (float x : v.data) {
    ASSERT_TRUE(std::isfinite(x));
    high = std::max(high, x);
  }
  EXPECT_GT(high, 100);  // a brain, not an empty volume
}

TEST_F(NiftiTest, ReadsIntegersWithScaling) {
  write_raw(dir_ / "i.nii", {3, 4, 3, 2}, DT_INT16, [](int64_t i) { return double(i) - 10; },
            [](nifti_image& nim) { nim.scl_slope = 0.5, nim.scl_inter = 100; });
  const Volume v = read_nifti(dir_ / "i.nii");
  ASSERT_EQ(v.data.size(), 24u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(v.data[i], float((i - 10) * 0.5 + 100)) << i;
  write_raw(dir_ / "u.nii.gz", {3, 4, 3, 2}, DT_UINT8, [](int64_t i) { return double(i * 10); });
  EXPECT_EQ(read_nifti(dir_ / "u.nii.gz").data[23], 230.0f);
}

// Without an sform the qform places the grid; without either, the voxel sizes.
TEST_F(NiftiTest, VoxelToWorldFromQformOrSpacing) {
  write_raw(dir_ / "q.nii", {3, 2, 2, 2}, DT_FLOAT32, [](int64_t) { return 1.0; }, [](nifti_image& nim) {
    nim.dx = nim.pixdim[1] = 2, nim.dy = nim.pixdim[2] = 3, nim.dz = nim.pixdim[3] = 4;
    nim.qform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim.qfac = 1, nim.qoffset_x = 5, nim.qoffset_y = 6, nim.qoffset_z = 7;
  });
  Volume q = read_nifti(dir_ / "q.nii");
  EXPECT_EQ(q.voxel_to_world[0][0], 2);
  EXPECT_EQ(q.voxel_to_world[1][1], 3);
  EXPECT_EQ(q.voxel_to_world[2][2], 4);
  EXPECT_EQ(q.voxel_to_world[2][3], 7);
  write_raw(dir_ / "p.nii", {3, 2, 2, 2}, DT_FLOAT32, [](int64_t) { return 1.0; }, [](nifti_image& nim) {
    nim.dx = nim.pixdim[1] = 2, nim.dy = nim.pixdim[2] = 3, nim.dz = nim.pixdim[3] = 4;
  });
  const Volume p = read_nifti(dir_ / "p.nii");
  EXPECT_EQ(p.voxel_to_world[0][0], 2);
  EXPECT_EQ(p.voxel_to_world[2][2], 4);
  EXPECT_EQ(p.voxel_to_world[0][3], 0);
}

// A grid that cannot be inverted cannot meet another image's in world coordinates.
TEST_F(NiftiTest, SingularSformIsRefused) {
  write_raw(dir_ / "s.nii", {3, 2, 2, 2}, DT_FLOAT32, [](int64_t) { return 1.0; }, [](nifti_image& nim) {
    nim.sform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim.sto_xyz = nifti_dmat44{};
    nim.sto_xyz.m[0][0] = 1, nim.sto_xyz.m[1][0] = 2, nim.sto_xyz.m[2][2] = 1, nim.sto_xyz.m[3][3] = 1;  // x and y axes the same
  });
  const std::string m = error_of([&] { read_nifti(dir_ / "s.nii"); });
  EXPECT_NE(m.find("s.nii: the sform is singular"), std::string::npos) << m;
  Volume v = sample_volume(1);
  v.voxel_to_world[1] = {0, 0, 0, 1};
  const std::string w = error_of([&] { write_nifti(dir_ / "w.nii", v); });
  EXPECT_NE(w.find("w.nii: the voxel_to_world is singular"), std::string::npos) << w;
}

TEST_F(NiftiTest, MissingFile) {
  const std::string m = error_of([&] { read_nifti(dir_ / "none.nii.gz"); });
  EXPECT_NE(m.find("none.nii.gz: no such file"), std::string::npos) << m;
}

TEST_F(NiftiTest, NotANiftiFile) {
  std::ofstream(dir_ / "text.nii") << "hello";
  const std::string m = error_of([&] { read_nifti(dir_ / "text.nii"); });
  EXPECT_NE(m.find("text.nii: no valid NIfTI"), std::string::npos) << m;
}

TEST_F(NiftiTest, TruncatedFile) {
  write_nifti(dir_ / "t.nii", sample_volume(1));
  fs::resize_file(dir_ / "t.nii", 352 + 100);
  const std::string m = error_of([&] { read_nifti(dir_ / "t.nii"); });
  EXPECT_NE(m.find("t.nii: truncated file"), std::string::npos) << m;
  EXPECT_NE(m.find("asks for 560 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("460 missing"), std::string::npos) << m;
}

TEST_F(NiftiTest, TruncatedCompressedFile) {
  Volume big = sample_volume(1);
  big.dim = {40, 40, 40};
  big.data.resize(big.voxels());
  for (std::size_t i = 0; i < big.data.size(); ++i) big.data[i] = float(std::sin(double(i)));
  write_nifti(dir_ / "t.nii.gz", big);
  fs::resize_file(dir_ / "t.nii.gz", fs::file_size(dir_ / "t.nii.gz") / 2);
  const std::string m = error_of([&] { read_nifti(dir_ / "t.nii.gz"); });
  EXPECT_NE(m.find("t.nii.gz: truncated or corrupt file"), std::string::npos) << m;
}

TEST_F(NiftiTest, TimeSeriesFile) {
  write_raw(dir_ / "4d.nii", {4, 3, 3, 3, 2}, DT_FLOAT32, [](int64_t) { return 1.0; });
  const std::string m = error_of([&] { read_nifti(dir_ / "4d.nii"); });
  EXPECT_NE(m.find("4d.nii: 4D (time series) file: dim[4] = 2, expected a 3D image"), std::string::npos) << m;
}

TEST_F(NiftiTest, UnsupportedDatatypes) {
  write_raw(dir_ / "c.nii", {3, 2, 2, 2}, DT_COMPLEX64, [](int64_t) { return 0.0; });
  const std::string complex = error_of([&] { read_nifti(dir_ / "c.nii"); });
  EXPECT_NE(complex.find("c.nii: unsupported datatype COMPLEX64"), std::string::npos) << complex;
  write_raw(dir_ / "rgb.nii.gz", {3, 2, 2, 2}, DT_RGB24, [](int64_t) { return 0.0; });
  const std::string rgb = error_of([&] { read_nifti(dir_ / "rgb.nii.gz"); });
  EXPECT_NE(rgb.find("rgb.nii.gz: unsupported datatype RGB24"), std::string::npos) << rgb;
}

TEST_F(NiftiTest, BadVoxelSizes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  write_raw(dir_ / "nan.nii", {3, 2, 2, 2}, DT_FLOAT32, [](int64_t) { return 1.0; },
            [&](nifti_image& nim) { nim.dy = nim.pixdim[2] = nan; });
  const std::string m = error_of([&] { read_nifti(dir_ / "nan.nii"); });
  EXPECT_NE(m.find("nan.nii: voxel size pixdim[2] = nan"), std::string::npos) << m;
  write_raw(dir_ / "zero.nii", {3, 2, 2, 2}, DT_FLOAT32, [](int64_t) { return 1.0; },
            [](nifti_image& nim) { nim.dz = nim.pixdim[3] = 0; });
  const std::string z = error_of([&] { read_nifti(dir_ / "zero.nii"); });
  EXPECT_NE(z.find("zero.nii: voxel size pixdim[3] = 0"), std::string::npos) << z;
}

TEST_F(NiftiTest, NonFiniteVoxelValue) {
  // Voxel (2, 1, 3) of a 4x3x5 grid is index 2 + 4 * (1 + 3 * 3) = 42.
  write_raw(dir_ / "v.nii", {3, 4, 3, 5}, DT_FLOAT64, [](int64_t i) {
    return i == 42 ? std::numeric_limits<double>::infinity() : i == 50 ? std::nan("") : 1.0;
  });
  const std::string m = error_of([&] { read_nifti(dir_ / "v.nii"); });
  EXPECT_NE(m.find("v.nii: non-finite voxel value inf at voxel (2, 1, 3)"), std::string::npos) << m;
}

TEST_F(NiftiTest, VectorFieldAndScalarImageMixedUp) {
  write_nifti(dir_ / "field.nii", sample_volume(3));
  const std::string as_scalar = error_of([&] { read_nifti(dir_ / "field.nii", 1); });
  EXPECT_NE(as_scalar.find("field.nii: a vector field (dim[5] = 3), expected a scalar 3D image"), std::string::npos)
      << as_scalar;
  write_nifti(dir_ / "image.nii", sample_volume(1));
  const std::string as_field = error_of([&] { read_nifti(dir_ / "image.nii", 3); });
  EXPECT_NE(as_field.find("image.nii: a scalar image, expected a 3D vector field"), std::string::npos) << as_field;
}

TEST_F(NiftiTest, RequireSameGrid) {
  const Volume a = sample_volume(1);
  Volume b = a;
  b.spacing[0] *= 1 + 1e-6;  // within 1e-4
  EXPECT_NO_THROW(require_same_grid(a, "a.nii", b, "b.nii"));
  b.dim[2] = 9;
  const std::string dims = error_of([&] { require_same_grid(a, "a.nii", b, "b.nii"); });
  EXPECT_NE(dims.find("b.nii: grid of 7x5x9 voxels"), std::string::npos) << dims;
  EXPECT_NE(dims.find("differs from a.nii (7x5x4 voxels of 0.75x1.25x2.5 mm)"), std::string::npos) << dims;
  b = a;
  b.spacing[1] = 1.3;
  const std::string spacing = error_of([&] { require_same_grid(a, "a.nii", b, "b.nii"); });
  EXPECT_NE(spacing.find("of 0.75x1.3x2.5 mm differs from a.nii"), std::string::npos) << spacing;
}

}  // namespace
}  // namespace gi::reg
