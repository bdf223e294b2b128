// A kernel whose project headers NVRTC cannot build (thrust, std::, host
// classes) next to the device helpers it calls: gi init cuts out the device
// code it needs into kernel_headers.cuh, a pre-include
// (gi/seed/header_device_code.hpp); structs come from those headers too,
// and NIfTI's mat33/mat44 from gi itself where no header defines them
// (grammar/record_type.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "fitness/gpu/cuda_devices.hpp"
#include "gi/seed/header_device_code.hpp"
#include "gi/seed/kernel_cut.hpp"
#include "grammar/record_type.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;

grammar::SourceFile header(const std::string& name, const std::string& text) {
  return grammar::SourceFile{name, text, grammar::tokenize(text, name)};
}

// A project header of the kind real kernels include: host code NVRTC cannot
// build beside the device helpers and operators the kernel calls.
const char* const kProjectHeader =
    "#pragma once\n"
    "#include <thrust/device_vector.h>\n"
    "#include <vector>\n"
    "#ifdef __CUDACC__\n"
    "#define DEVICE __host__ __device__\n"
    "#else\n"
    "#define DEVICE\n"
    "#endif\n"
    "#define SCALE 2\n"
    "namespace proj {\n"
    "template <typename T> DEVICE inline T Square(const T& x) { return x * x; }\n"
    "DEVICE inline float Unused(float x) { return x; }\n"
    "inline void HostOnly(std::vector<float>& v) { v.clear(); }\n"
    "struct Weights { float a; float b; };\n"
    "struct Holder { void fill(); std::vector<int> data; };\n"
    "}  // namespace proj\n"
    "__device__ inline float3 operator+(const float3& a, const float3& b) {\n"
    "  return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);\n"
    "}\n"
    "__device__ inline int4 operator+(const int4& a, const int4& b) {\n"
    "  return make_int4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);\n"
    "}\n"
    "__global__ void other_kernel(float* x) { x[0] = 0; }\n";

const char* const kKernel =
    "#include \"proj.h\"\n"
    "using namespace proj;\n"
    "__global__ void blend(const float3* in, float3* out, Weights w, mat33 r, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    const float3 v = in[i] + in[i];\n"
    "    out[i] = make_float3(Square(v.x) * w.a + r.m[0][0], v.y * w.b * SCALE, v.z * r.m[2][2]);\n"
    "  }\n"
    "}\n";

TEST(HeaderDeviceCode, KeepsWhatTheKernelNamesAndLeavesHostCodeOut) {
  const HeaderDeviceCode code = header_device_code(kKernel, "blend.cu", {header("proj.h", kProjectHeader)});
  const std::string& t = code.text;
  // What the kernel names, directly or as an operator over its types.
  EXPECT_NE(t.find("DEVICE inline T Square"), std::string::npos) << t;
  EXPECT_NE(t.find("struct Weights { float a; float b; };"), std::string::npos) << t;
  EXPECT_NE(t.find("operator+(const float3& a"), std::string::npos) << t;
  EXPECT_NE(t.find("namespace proj {"), std::string::npos) << t;
  // Macros and their conditionals, as they were.
  EXPECT_NE(t.find("#define DEVICE __host__ __device__"), std::string::npos) << t;
  EXPECT_NE(t.find("#define SCALE 2"), std::string::npos) << t;
  // Not named, host only, a kernel, an include: left out.
  EXPECT_EQ(t.find("Unused"), std::string::npos) << t;
  EXPECT_EQ(t.find("HostOnly"), std::string::npos) << t;
  EXPECT_EQ(t.find("struct Holder"), std::string::npos) << t;
  EXPECT_EQ(t.find("int4 operator+"), std::string::npos) << t;
  EXPECT_EQ(t.find("other_kernel"), std::string::npos) << t;
  EXPECT_EQ(t.find("#include"), std::string::npos) << t;
  EXPECT_EQ(t.find("#pragma once"), std::string::npos) << t;
  // mat33: no header defines it, gi knows it.
  EXPECT_NE(t.find("typedef struct { float m[3][3]; } mat33;"), std::string::npos) << t;
  EXPECT_EQ(code.known, (std::vector<std::string>{"mat33"}));
  EXPECT_EQ(t.find("mat44"), std::string::npos) << t;
  ASSERT_FALSE(code.kept.empty());
  EXPECT_EQ(code.kept[0], "Square (proj.h line 11)");
}

// A header that defines mat33 itself: that definition is the one kept, not gi's.
TEST(HeaderDeviceCode, AHeadersOwnDefinitionOfAWellKnownTypeWins) {
  const HeaderDeviceCode code = header_device_code(
      kKernel, "blend.cu",
      {header("proj.h", kProjectHeader), header("nifti.h", "typedef struct { float m[3][3]; } mat33;\n")});
  EXPECT_TRUE(code.known.empty());
  EXPECT_NE(code.text.find("// from nifti.h\ntypedef struct { float m[3][3]; } mat33;"), std::string::npos) << code.text;
}

// Struct parameters are looked up in the kernel's file, then its headers,
// then among the types gi knows; a definition gi cannot read in the file
// itself is not looked past.
TEST(RecordType, StructsAreFoundInHeadersAndAmongTheWellKnownTypes) {
  const std::vector<grammar::SourceFile> headers = {header("proj.h", kProjectHeader)};
  const std::vector<grammar::Token> kernel = grammar::tokenize(kKernel, "blend.cu");
  std::string why;
  const auto weights = grammar::find_record_type(kernel, &headers, "Weights", why);
  ASSERT_TRUE(weights) << why;
  EXPECT_EQ(weights->layout, (std::vector<std::string>{"float", "float"}));
  EXPECT_EQ(weights->where(), "proj.h line 14");
  const auto mat = grammar::find_record_type(kernel, &headers, "mat44", why);
  ASSERT_TRUE(mat) << why;
  EXPECT_EQ(mat->layout, (std::vector<std::string>{"float[16]"}));
  EXPECT_EQ(mat->where(), "NIfTI's nifti1_io.h (gi knows it)");
  EXPECT_FALSE(grammar::find_record_type(kernel, &headers, "Holder", why));
  EXPECT_NE(why.find("proj.h"), std::string::npos) << why;
  const std::vector<grammar::Token> own =
      grammar::tokenize("struct Weights { float a; int b : 3; };\n", "k.cu");
  EXPECT_FALSE(grammar::find_record_type(own, &headers, "Weights", why));
  EXPECT_NE(why.find("bit field"), std::string::npos) << why;
}

// The cut blanks what the kernel does not name, but never `using namespace`,
// which names no declaration and which the kernel's names may need.
// CubicInterpolation's castFloat4.cu includes memcpy.cu for a device
// template and its explicit specialisations, which are the template's (not
// the type they name), and the typedefs they name come first.
TEST(HeaderDeviceCode, ATemplateAndItsSpecialisationsComeTogether) {
  const char* const memcpy_cu =
      "#include <cutil.h>\n"
      "typedef unsigned char uchar;\n"
      "template<class T> __device__ float Multiplier() { return 1.0f; }\n"
      "template<> __device__ float Multiplier<uchar>() { return 255.0f; }\n"
      "template<class T> __global__ void CopyCast(uchar* d, const T* s) { d[0] = s[0]; }\n"
      "void host_only() {}\n";
  const char* const kernel =
      "#include \"memcpy.cu\"\n"
      "template<class T> __global__ void Interleave(uchar* d, const T* s) {\n"
      "  d[threadIdx.x] = (uchar)(Multiplier<T>() * s[threadIdx.x]);\n"
      "}\n";
  const HeaderDeviceCode code = header_device_code(kernel, "castFloat4.cu", {header("memcpy.cu", memcpy_cu)});
  const std::size_t type = code.text.find("typedef unsigned char uchar;");
  const std::size_t primary = code.text.find("template<class T> __device__ float Multiplier()");
  const std::size_t special = code.text.find("Multiplier<uchar>()");
  ASSERT_NE(type, std::string::npos) << code.text;
  ASSERT_NE(primary, std::string::npos) << code.text;
  ASSERT_NE(special, std::string::npos) << code.text;
  EXPECT_LT(type, primary);
  EXPECT_LT(primary, special);
  EXPECT_EQ(code.text.find("CopyCast"), std::string::npos) << code.text;
  EXPECT_EQ(code.text.find("host_only"), std::string::npos) << code.text;
}

// NVRTC defines no M_PI; a system include blanked with the rest took
// glibc's with it (NiftyReg's sinc kernel names it).
TEST(HeaderDeviceCode, MathConstantsTheKernelNamesAreDefined) {
  const char* const helpers = "__device__ float twice(float x) { return 2.0f * x; }\n";
  const char* const kernel =
      "#include \"helpers.h\"\n"
      "__global__ void k(float* out) { out[threadIdx.x] = twice((float)M_PI); }\n";
  const HeaderDeviceCode code = header_device_code(kernel, "k.cu", {header("helpers.h", helpers)});
  EXPECT_TRUE(code.math_constants);
  EXPECT_NE(code.text.find("#define M_PI 3.14159265358979323846"), std::string::npos) << code.text;
  const HeaderDeviceCode without = header_device_code(
      "#include \"helpers.h\"\n__global__ void k(float* out) { out[threadIdx.x] = twice(1.f); }\n", "k.cu",
      {header("helpers.h", helpers)});
  EXPECT_FALSE(without.math_constants);
  EXPECT_EQ(without.text.find("M_PI"), std::string::npos) << without.text;
}

TEST(HeaderDeviceCode, TheCutKeepsUsingNamespace) {
  const KernelCut cut = cut_kernel(kKernel, "blend.cu", "blend", true);
  EXPECT_NE(cut.source.find("using namespace proj;"), std::string::npos) << cut.source;
  EXPECT_EQ(cut.source.find("#include"), std::string::npos) << cut.source;
}

// The sizes blend's scalars take: n, the struct's two floats, mat33's nine.
std::string blend_sizes() {
  std::string sizes = "--size n=5000 --size w_a=0.5 --size w_b=0.25";
  for (int c = 0; c < 9; ++c) sizes += " --size r_m_" + std::to_string(c) + "=0.5";
  return sizes;
}

// spec.json pre-includes kernel_headers.cuh alone; without a GPU, --check's
// run on the emulator passed.
void expect_headers_pre_included(const fs::path& dir, const std::string& output) {
  std::ifstream in(dir / "spec.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  EXPECT_EQ(spec["pre_includes"], nlohmann::json::array({kHeadersFile}));
  if (fitness::probe_cuda().gpus.empty()) {
    EXPECT_NE(output.find("\"status\": \"ok\""), std::string::npos) << output;
  }
}

// gi init on the file: no FILL (the struct from the header, mat33 from gi),
// the file builds neither whole nor cut, kernel_headers.cuh is written and
// made a pre-include, and the seed compiles and passes its check.
TEST(HeaderDeviceCode, GiInitCutsTheHeadersDeviceCodeIntoAPreInclude) {
  const fs::path root = fs::temp_directory_path() / ("gi-init-headers-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "include");
  std::ofstream(root / "include/proj.h") << kProjectHeader;
  std::ofstream(root / "blend.cu") << kKernel;
  const fs::path dir = root / "user/blend";
  const test::CommandOutput init = test::run_gi("init \"" + (root / "blend.cu").string() + "\" --out \"" + dir.string() +
                                                "\" --include-dir \"" + (root / "include").string() + "\" " + blend_sizes() +
                                                " --check");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("'w': struct Weights by value (proj.h line 14"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("'r': struct mat33 by value (NIfTI's nifti1_io.h (gi knows it)"), std::string::npos)
      << init.output;
  EXPECT_NE(init.output.find("note: nor do its headers; "), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("Square (proj.h line 11)"), std::string::npos) << init.output;
  ASSERT_TRUE(fs::exists(dir / kHeadersFile));
  expect_headers_pre_included(dir, init.output);
  fs::remove_all(root);
}

// A kernel file that includes nothing: its host file includes the project
// header first (NiftyReg's _reg_X_gpu.cu: _reg_X_gpu.h, then
// _reg_X_kernels.cu), given as --pre-include. That header does not build
// with NVRTC either: the cut drops it with the includes, and its device
// code stands in its place.
TEST(HeaderDeviceCode, APreIncludeThatDoesNotBuildIsCutLikeAnInclude) {
  const fs::path root = fs::temp_directory_path() / ("gi-init-pre-include-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "include");
  std::ofstream(root / "include/proj.h") << kProjectHeader;
  const std::string kernel = std::string(kKernel).substr(std::string(kKernel).find('\n') + 1);
  ASSERT_EQ(kernel.find("#include"), std::string::npos);
  std::ofstream(root / "blend_kernels.cu") << kernel;
  const fs::path dir = root / "user/blend";
  const test::CommandOutput init =
      test::run_gi("init \"" + (root / "blend_kernels.cu").string() + "\" --out \"" + dir.string() +
                   "\" --include-dir \"" + (root / "include").string() + "\" --pre-include proj.h " + blend_sizes() +
                   " --check");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("(0 fields to fill)"), std::string::npos) << init.output;
  // The header's struct is read through the pre-include.
  EXPECT_NE(init.output.find("'w': struct Weights by value (proj.h line 14"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("the pre-include proj.h;"), std::string::npos) << init.output;
  EXPECT_NE(init.output.find("Square (proj.h line 11)"), std::string::npos) << init.output;
  EXPECT_EQ(init.output.find("problem: "), std::string::npos) << init.output;
  expect_headers_pre_included(dir, init.output);
  fs::remove_all(root);
}

// Where no cut builds, the draft keeps the user's pre-include as given.
TEST(HeaderDeviceCode, APreIncludeStaysWhereNoCutBuilds) {
  const fs::path root = fs::temp_directory_path() / ("gi-init-pre-include-kept-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "defs.h") << "#include <vector>\n#define TILE 4\n";
  // `undeclared_helper` is nowhere: neither the file nor any cut compiles.
  std::ofstream(root / "k.cu") << "__global__ void k(float* out, int n) {\n"
                                  "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "  if (i < n) out[i] = undeclared_helper(i) * TILE;\n"
                                  "}\n";
  const test::CommandOutput init = test::run_gi("init \"" + (root / "k.cu").string() + "\" --out \"" +
                                                (root / "seed").string() + "\" --pre-include defs.h --size n=1000");
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("problem: "), std::string::npos) << init.output;
  std::ifstream in(root / "seed/spec.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  EXPECT_EQ(spec["pre_includes"], nlohmann::json::array({"defs.h"}));
  EXPECT_FALSE(fs::exists(root / "seed" / kHeadersFile));
  fs::remove_all(root);
}

}  // namespace
}  // namespace gi
