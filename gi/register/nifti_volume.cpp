// Volumes to and from NIfTI files through nifticlib's nifti2_io, which reads
// NIfTI-1, NIfTI-2 and ANALYZE headers. Two places bypass its conveniences on
// purpose: nifticlib replaces a voxel size of 0 or NaN by 1 and a NaN or inf
// voxel by 0 without saying so, and gi must reject such files rather than
// register a silently altered image. So the header's own pixdim is read again
// (nifti_read_n1_hdr / nifti_read_n2_hdr) and the voxel bytes are read
// through znzlib instead of nifti_image_load.
#include "gi/register/volume.hpp"

#include <nifti2_io.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "gi/register/parallel_gzip.hpp"

namespace gi::reg {
namespace {

namespace fs = std::filesystem;

// nifticlib reports by printing to stderr; gi reports through NiftiError.
void quiet_nifticlib() {
  static std::once_flag once;
  std::call_once(once, [] { nifti_set_debug_level(0); });
}

struct NimFree {
  void operator()(nifti_image* nim) const { nifti_image_free(nim); }
};
using NimPtr = std::unique_ptr<nifti_image, NimFree>;

struct CFree {
  void operator()(void* p) const { std::free(p); }
};

std::string join(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}
std::string join(const std::array<double, 3>& s) {
  std::ostringstream out;
  out.precision(7);
  out << s[0] << "x" << s[1] << "x" << s[2];
  return out.str();
}

bool ends_with_ci(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() &&
         std::equal(tail.begin(), tail.end(), s.end() - long(tail.size()),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// Why the file's dim[] does not hold what the caller expects; empty if it does.
std::string shape_problem(const nifti_image& nim, int components) {
  const int64_t n = nim.dim[0];
  auto size = [&](int k) { return k <= n ? nim.dim[k] : int64_t{1}; };
  auto dim_text = [&](int k) { return "dim[" + std::to_string(k) + "] = " + std::to_string(size(k)); };
  const std::string wanted = components == 1 ? "a 3D image" : "a 3D vector field (dim[4] = 1, dim[5] = 3)";
  if (n < 3) return std::to_string(n) + "D file (dim[0] = " + std::to_string(n) + "), expected " + wanted;
  if (size(4) > 1) return "4D (time series) file: " + dim_text(4) + ", expected " + wanted;
  if (components == 1 && size(5) == 3) return "a vector field (dim[5] = 3), expected a scalar 3D image";
  if (components == 3 && size(5) == 1) return "a scalar image, expected " + wanted;
  if (size(5) != components) return dim_text(5) + ", expected " + wanted;
  for (int k = 6; k <= 7; ++k)
    if (size(k) > 1) return dim_text(k) + ", expected " + wanted;
  if (std::max({nim.nx, nim.ny, nim.nz}) > INT32_MAX) return "dimensions too large";
  return {};
}

bool supported_datatype(int datatype) {
  switch (datatype) {
    case DT_UINT8: case DT_INT8: case DT_UINT16: case DT_INT16: case DT_UINT32:
    case DT_INT32: case DT_UINT64: case DT_INT64: case DT_FLOAT32: case DT_FLOAT64:
      return true;
    default:
      return false;
  }
}

// pixdim[1..3] exactly as stored (byte-swapped to this machine), since the
// nifti_image holds 1 where the file has 0 or NaN.
std::array<double, 3> stored_voxel_size(const fs::path& file, const nifti_image& nim) {
  int swapped = 0;
  std::array<double, 3> size{};
  if (nim.nifti_type == NIFTI_FTYPE_NIFTI2_1 || nim.nifti_type == NIFTI_FTYPE_NIFTI2_2) {
    std::unique_ptr<nifti_2_header, CFree> h(nifti_read_n2_hdr(file.c_str(), &swapped, 0));
    if (!h) throw NiftiError(file, "cannot read the NIfTI-2 header again");
    for (int k = 0; k < 3; ++k) size[k] = h->pixdim[k + 1];
  } else {
    std::unique_ptr<nifti_1_header, CFree> h(nifti_read_n1_hdr(file.c_str(), &swapped, 0));
    if (!h) throw NiftiError(file, "cannot read the NIfTI-1 header again");
    for (int k = 0; k < 3; ++k) size[k] = h->pixdim[k + 1];
  }
  return size;
}

// The voxel bytes in this machine's byte order. A short read is a truncated
// file (nifticlib would only warn and fail without saying why).
std::vector<unsigned char> read_voxel_bytes(const fs::path& file, const nifti_image& nim) {
  const int64_t want = nim.nvox * nim.nbyper;
  const std::string data_file = nim.iname ? nim.iname : file.string();
  const bool gz = nifti_is_gzfile(data_file.c_str());
  const std::string where = data_file == file.string() ? "" : " (data file " + data_file + ")";
  if (!gz) {
    std::error_code ec;
    const auto have = fs::file_size(data_file, ec);
    if (ec) throw NiftiError(file, "cannot open the voxel data" + where + ": " + ec.message());
    if (int64_t(have) < nim.iname_offset + want)
      throw NiftiError(file, "truncated file" + where + ": the header asks for " + std::to_string(want) +
                                 " bytes of voxel data from byte " + std::to_string(nim.iname_offset) +
                                 ", the file has " + std::to_string(have) + " bytes (" +
                                 std::to_string(nim.iname_offset + want - int64_t(have)) + " missing)");
  }
  znzFile fp = znzopen(data_file.c_str(), "rb", gz);
  if (znz_isnull(fp)) throw NiftiError(file, "cannot open the voxel data" + where);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(want));
  const bool sought = znzseek(fp, nim.iname_offset, SEEK_SET) >= 0;
  const std::size_t got = sought ? znzread(bytes.data(), 1, bytes.size(), fp) : 0;
  znzclose(fp);
  if (got != bytes.size()) {
    // znzread returns (size_t)-1 when zlib reports corrupt data.
    const std::string read = got > bytes.size() ? "none" : "only " + std::to_string(got);
    throw NiftiError(file, "truncated or corrupt file" + where + ": the header asks for " + std::to_string(want) +
                               " bytes of voxel data, " + read + " could be read");
  }
  if (nim.swapsize > 1 && nim.byteorder != nifti_short_order())
    nifti_swap_Nbytes(want / nim.swapsize, nim.swapsize, bytes.data());
  return bytes;
}

template <class T>
void convert(const unsigned char* raw, std::size_t n, bool scaled, double slope, double inter, float* out) {
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw + i * sizeof(T), sizeof(T));
    // Unscaled values are cast directly so that float32 data (even -0) stays bit-exact.
    out[i] = scaled ? static_cast<float>(static_cast<double>(v) * slope + inter) : static_cast<float>(v);
  }
}

void convert_any(int datatype, const unsigned char* raw, std::size_t n, bool scaled, double slope, double inter,
                 float* out) {
  switch (datatype) {
    case DT_UINT8: return convert<uint8_t>(raw, n, scaled, slope, inter, out);
    case DT_INT8: return convert<int8_t>(raw, n, scaled, slope, inter, out);
    case DT_UINT16: return convert<uint16_t>(raw, n, scaled, slope, inter, out);
    case DT_INT16: return convert<int16_t>(raw, n, scaled, slope, inter, out);
    case DT_UINT32: return convert<uint32_t>(raw, n, scaled, slope, inter, out);
    case DT_INT32: return convert<int32_t>(raw, n, scaled, slope, inter, out);
    case DT_UINT64: return convert<uint64_t>(raw, n, scaled, slope, inter, out);
    case DT_INT64: return convert<int64_t>(raw, n, scaled, slope, inter, out);
    case DT_FLOAT32: return convert<float>(raw, n, scaled, slope, inter, out);
    case DT_FLOAT64: return convert<double>(raw, n, scaled, slope, inter, out);
    default: break;  // rejected before reading
  }
}

void check_voxel_to_world(const fs::path& file, const std::array<std::array<double, 4>, 4>& m, const char* which) {
  for (const auto& row : m)
    for (double x : row)
      if (!std::isfinite(x)) throw NiftiError(file, std::string("the ") + which + " has a non-finite entry");
  // Images on different grids meet through world coordinates, so the map
  // must be invertible: its three axes independent, judged against their length.
  double scale = 0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) scale = std::max(scale, std::abs(m[r][c]));
  const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  if (!(std::abs(det) > 1e-9 * scale * scale * scale))
    throw NiftiError(file, std::string("the ") + which + " is singular: its voxel axes are not independent");
}

// Removes a temporary file unless the write got as far as renaming it.
struct RemoveUnlessKept {
  fs::path path;
  bool keep = false;
  ~RemoveUnlessKept() {
    std::error_code ec;
    if (!keep) fs::remove(path, ec);
  }
};

}  // namespace

Volume read_nifti(const fs::path& file, int components) {
  quiet_nifticlib();
  if (components != 1 && components != 3)
    throw NiftiError(file, "cannot be read with components = " + std::to_string(components) + " (1 or 3)");
  std::error_code ec;
  if (!fs::exists(file, ec)) throw NiftiError(file, "no such file");
  if (!fs::is_regular_file(file, ec)) throw NiftiError(file, "not a regular file");
  if (!std::ifstream(file, std::ios::binary)) throw NiftiError(file, std::string("cannot read: ") + std::strerror(errno));
  if (!nifti_find_file_extension(file.c_str()))
    throw NiftiError(file, "not a NIfTI file name (expected .nii, .nii.gz, .hdr or .img)");

  NimPtr nim(nifti_image_read(file.c_str(), 0));
  if (!nim) throw NiftiError(file, "no valid NIfTI-1 or NIfTI-2 header (too short, or not a NIfTI file)");
  if (nim->nifti_type == NIFTI_FTYPE_ASCII) throw NiftiError(file, "ASCII NIfTI (.nia) files are not supported");
  if (!supported_datatype(nim->datatype))
    throw NiftiError(file, std::string("unsupported datatype ") + nifti_datatype_string(nim->datatype) + " (code " +
                               std::to_string(nim->datatype) +
                               "): gi reads real numbers (uint8/16/32/64, int8/16/32/64, float32, float64), "
                               "not complex, RGB or RGBA data");
  if (auto problem = shape_problem(*nim, components); !problem.empty()) throw NiftiError(file, problem);

  Volume v;
  v.components = components;
  v.dim = {int(nim->nx), int(nim->ny), int(nim->nz)};
  v.spacing = stored_voxel_size(file, *nim);
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(v.spacing[k]) || v.spacing[k] <= 0) {
      std::ostringstream value;
      value << v.spacing[k];
      throw NiftiError(file, "voxel size pixdim[" + std::to_string(k + 1) + "] = " + value.str() +
                                 " (every voxel size must be finite and positive)");
    }

  if (nim->sform_code > 0) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) v.voxel_to_world[r][c] = nim->sto_xyz.m[r][c];
    check_voxel_to_world(file, v.voxel_to_world, "sform");
  } else if (nim->qform_code > 0) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) v.voxel_to_world[r][c] = nim->qto_xyz.m[r][c];
    check_voxel_to_world(file, v.voxel_to_world, "qform");
  } else {
    for (int k = 0; k < 3; ++k) v.voxel_to_world[k][k] = v.spacing[k];
  }

  const auto raw = read_voxel_bytes(file, *nim);
  const double slope = nim->scl_slope, inter = nim->scl_inter;
  const bool scaled = slope != 0 && std::isfinite(slope) && std::isfinite(inter) && !(slope == 1 && inter == 0);
  v.data.resize(static_cast<std::size_t>(nim->nvox));
  convert_any(nim->datatype, raw.data(), v.data.size(), scaled, slope, inter, v.data.data());

  const auto bad = std::find_if(v.data.begin(), v.data.end(), [](float x) { return !std::isfinite(x); });
  if (bad != v.data.end()) {
    const std::size_t i = std::size_t(bad - v.data.begin()), n = v.voxels();
    const std::size_t at = i % n, x = at % v.dim[0], y = at / v.dim[0] % v.dim[1], z = at / v.dim[0] / v.dim[1];
    std::ostringstream msg;
    msg << "non-finite voxel value " << *bad << " at voxel (" << x << ", " << y << ", " << z << ")";
    if (components > 1) msg << " component " << i / n;
    throw NiftiError(file, msg.str());
  }
  return v;
}

void write_nifti(const fs::path& file, const Volume& volume, const std::string& description) {
  quiet_nifticlib();
  const std::string name = file.filename().string();
  const bool gz = ends_with_ci(name, ".nii.gz");
  if (!gz && !ends_with_ci(name, ".nii")) throw NiftiError(file, "gi writes .nii or .nii.gz files only");
  if (volume.components != 1 && volume.components != 3)
    throw NiftiError(file, "cannot write a volume of " + std::to_string(volume.components) + " components (1 or 3)");
  if (std::min({volume.dim[0], volume.dim[1], volume.dim[2]}) <= 0)
    throw NiftiError(file, "cannot write a volume of " + join(volume.dim) + " voxels");
  if (volume.data.size() != volume.voxels() * std::size_t(volume.components))
    throw NiftiError(file, "volume of " + join(volume.dim) + " voxels x " + std::to_string(volume.components) +
                               " components holds " + std::to_string(volume.data.size()) + " values");
  for (double s : volume.spacing)
    if (!std::isfinite(s) || s <= 0) throw NiftiError(file, "cannot write voxel size " + join(volume.spacing));
  check_voxel_to_world(file, volume.voxel_to_world, "voxel_to_world");

  // Written under a temporary name beside the final one and renamed at the
  // end, so a reader never finds a half-written file under the final name.
  const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw NiftiError(file, "folder " + folder.string() + " does not exist");
  static std::atomic<unsigned> counter{0};
  const std::string base = name.substr(0, name.size() - (gz ? 7 : 4));
  // nifticlib always writes an uncompressed .nii; a .nii.gz is then made
  // from it on every core (gi/register/parallel_gzip.hpp).
  const std::string temp_base = "." + base + ".gi-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const fs::path temp = folder / (temp_base + ".nii");
  RemoveUnlessKept cleanup{temp};
  // Creating it first gives the reason (permissions, ...) that nifticlib would only print.
  if (!std::ofstream(temp, std::ios::binary))
    throw NiftiError(file, "cannot create " + temp.string() + ": " + std::strerror(errno));

  const int64_t dims[8] = {volume.components == 3 ? 5 : 3, volume.dim[0], volume.dim[1], volume.dim[2], 1,
                           volume.components, 1, 1};
  NimPtr nim(nifti_make_new_nim(dims, DT_FLOAT32, 0));
  if (!nim) throw NiftiError(file, "nifticlib could not make a header");
  // The data is lent to nifticlib, which would free it with the image.
  struct Lend {
    nifti_image* nim;
    ~Lend() { nim->data = nullptr; }
  } lend{nim.get()};
  nim->data = const_cast<float*>(volume.data.data());
  // NIfTI-1 as most tools read it; NIfTI-2 only where a size needs more than 16 bits.
  nim->nifti_type = std::max({volume.dim[0], volume.dim[1], volume.dim[2]}) > 32767 ? NIFTI_FTYPE_NIFTI2_1
                                                                                    : NIFTI_FTYPE_NIFTI1_1;
  if (nifti_set_filenames(nim.get(), temp.c_str(), 0, 1) != 0 || temp.string() != nim->fname)
    throw NiftiError(file, "nifticlib does not accept the name " + temp.string());

  nim->dx = nim->pixdim[1] = volume.spacing[0];
  nim->dy = nim->pixdim[2] = volume.spacing[1];
  nim->dz = nim->pixdim[3] = volume.spacing[2];
  nim->xyz_units = NIFTI_UNITS_MM;
  nim->intent_code = volume.components == 3 ? NIFTI_INTENT_VECTOR : NIFTI_INTENT_NONE;
  std::strncpy(nim->descrip, description.c_str(), sizeof nim->descrip - 1);
  nim->descrip[sizeof nim->descrip - 1] = '\0';

  nifti_dmat44 m;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) m.m[r][c] = volume.voxel_to_world[r][c];
  nim->sform_code = NIFTI_XFORM_SCANNER_ANAT;
  nim->sto_xyz = m;
  nim->sto_ijk = nifti_dmat44_inverse(m);
  // A qform holds only rotation, voxel size and offset: it is written when it
  // reproduces voxel_to_world (with these voxel sizes), else left out rather
  // than contradicting the sform.
  double qb, qc, qd, qx, qy, qz, dx, dy, dz, qfac;
  nifti_dmat44_to_quatern(m, &qb, &qc, &qd, &qx, &qy, &qz, &dx, &dy, &dz, &qfac);
  const nifti_dmat44 q = nifti_quatern_to_dmat44(qb, qc, qd, qx, qy, qz, volume.spacing[0], volume.spacing[1],
                                                 volume.spacing[2], qfac);
  double scale = 1, error = 0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      if (c < 3) scale = std::max(scale, std::abs(m.m[r][c]));
      error = std::max(error, std::abs(m.m[r][c] - q.m[r][c]));
    }
  if (error <= 1e-4 * scale) {
    nim->qform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim->quatern_b = qb, nim->quatern_c = qc, nim->quatern_d = qd;
    nim->qoffset_x = qx, nim->qoffset_y = qy, nim->qoffset_z = qz;
    nim->qfac = qfac;
    nim->qto_xyz = q;
    nim->qto_ijk = nifti_dmat44_inverse(q);
  }

  nifti_image_write(nim.get());
  // nifticlib ignores a short data write (a full disk), so the size of what
  // was written is checked before the file takes the final name.
  const std::uint64_t expected = std::uint64_t(nim->iname_offset) + std::uint64_t(nim->nvox) * nim->nbyper;
  if (fs::file_size(temp, ec) != expected || ec)
    throw NiftiError(file, "writing " + temp.string() + " failed (disk full or not writable?)");
  fs::path finished = temp;
  std::optional<RemoveUnlessKept> compressed_cleanup;
  if (gz) {
    finished = folder / (temp_base + ".nii.gz");
    compressed_cleanup.emplace(finished);
    // Level 1: float data of this kind shrinks no further at level 6 (85 MB
    // fields gave 79 MB at both), and level 6 took about 6 s per field.
    try {
      gzip_file_parallel(temp, finished, 1);
    } catch (const std::runtime_error& e) {
      throw NiftiError(file, e.what());
    }
  }
  fs::rename(finished, file, ec);
  if (ec) throw NiftiError(file, "cannot rename " + finished.string() + " to it: " + ec.message());
  if (compressed_cleanup) compressed_cleanup->keep = true;
  else cleanup.keep = true;
}

void require_same_grid(const Volume& a, const fs::path& a_file, const Volume& b, const fs::path& b_file) {
  bool same = a.dim == b.dim;
  for (int k = 0; k < 3; ++k)
    same = same && std::abs(a.spacing[k] - b.spacing[k]) <= 1e-4 * std::max(std::abs(a.spacing[k]), std::abs(b.spacing[k]));
  if (!same)
    throw NiftiError(b_file, "grid of " + join(b.dim) + " voxels of " + join(b.spacing) + " mm differs from " +
                                 a_file.string() + " (" + join(a.dim) + " voxels of " + join(a.spacing) + " mm)");
}

}  // namespace gi::reg
