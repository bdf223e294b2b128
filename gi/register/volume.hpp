#pragma once
// A 3D image or a 3D vector field in host memory, laid out as NIfTI stores
// it, and its reading and writing through nifticlib (gi/register/nifti_volume.cpp).
// The registration (gi register), its test pairs and its accuracy
// measurement all exchange images as Volumes.
#include <array>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace gi::reg {

struct Volume {
  std::array<int, 3> dim{0, 0, 0};         // voxels along x, y, z
  int components = 1;                      // 1: a scalar image; 3: a vector field (NIfTI dim[5] = 3)
  std::array<double, 3> spacing{1, 1, 1};  // voxel size in mm (pixdim[1..3])
  // Voxel index (x, y, z, 1) to world millimetres (RAS): the sform when its
  // code is set, else the qform, else diag(spacing).
  std::array<std::array<double, 4>, 4> voxel_to_world{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
  // x fastest, then y, then z; a vector field holds its components one after
  // another (component c of voxel v at c * voxels() + v), as NIfTI does.
  std::vector<float> data;

  std::size_t voxels() const { return std::size_t(dim[0]) * dim[1] * dim[2]; }
  std::size_t index(int x, int y, int z) const { return (std::size_t(z) * dim[1] + y) * dim[0] + x; }
  float& at(int x, int y, int z, int c = 0) { return data[c * voxels() + index(x, y, z)]; }
  float at(int x, int y, int z, int c = 0) const { return data[c * voxels() + index(x, y, z)]; }
};

// A NIfTI file gi cannot use; what() is "<file>: <problem>".
class NiftiError : public std::runtime_error {
 public:
  NiftiError(const std::filesystem::path& file, const std::string& problem)
      : std::runtime_error(file.string() + ": " + problem) {}
};

// Reads a .nii or .nii.gz file (NIfTI-1 or NIfTI-2; an ANALYZE .hdr/.img pair
// too). `components` is what the caller expects: 1, a 3D scalar image (dim[0]
// 3, or larger with every extra size 1); 3, a vector field (dim[4] 1, dim[5]
// 3). Stored (u)int8/16/32/64, float32 and float64 are converted to float,
// with scl_slope / scl_inter applied when the slope is non-zero and finite
// (float32 without scaling stays bit-exact). Throws NiftiError naming the file
// and the problem: missing or unreadable, not NIfTI, truncated (fewer voxel
// bytes than the header asks for), a 4D (time series) or otherwise
// wrong-shaped file, complex, RGB or RGBA data, a voxel size pixdim[1..3]
// that is not finite and positive, a non-finite voxel value (the first one's
// x, y, z). nifticlib itself would silently make such sizes 1 and such values
// 0; gi refuses the file instead.
Volume read_nifti(const std::filesystem::path& file, int components = 1);

// Writes `volume` as NIfTI-1 float32 (.nii or .nii.gz by the name), spacing
// as pixdim, voxel_to_world as the sform and, when a rotation with these
// voxel sizes reproduces it, the qform (codes NIFTI_XFORM_SCANNER_ANAT); a
// vector field gets dim[0] = 5, dim[4] = 1, dim[5] = 3 and the intent
// NIFTI_INTENT_VECTOR. `description` goes into the header's descrip (at most
// 79 characters kept). Values are written as they are (read_nifti refuses
// non-finite ones). The file is written under a temporary name in the same
// folder, its size checked, then renamed, so a failed write leaves nothing under
// `file`. Throws NiftiError when the volume is inconsistent or the file
// cannot be written.
void write_nifti(const std::filesystem::path& file, const Volume& volume, const std::string& description = "");

// Throws NiftiError naming `b_file` (and `a_file`) when b's dimensions or
// voxel size differ from a's (voxel sizes compared to 1e-4 relative).
void require_same_grid(const Volume& a, const std::filesystem::path& a_file, const Volume& b,
                       const std::filesystem::path& b_file);

}  // namespace gi::reg
