#pragma once
// The device code a kernel needs from its project's headers, cut out into a
// file of its own. Real kernel files include project headers that NVRTC
// cannot build (thrust, OpenMP, <fstream>, a library's host classes) next
// to the small device functions, operators and structs the kernel calls
// (NiftyReg's CudaCommon.hpp: IndexToDims beside thrust). gi init then
// blanks the includes (gi/seed/kernel_cut.hpp) and puts in their place one
// include of this file, which holds, from each local header in include
// order:
//  - its preprocessor lines but #include and #pragma once (macros, and the
//    conditionals around what is kept, stay as they were);
//  - its namespaces, `using namespace` of those, and extern "C" blocks;
//  - the definitions the kernel needs, found by name from what kernel.cu
//    names, and then from what each kept definition names: __device__
//    functions and prototypes (a macro that expands to __device__, such as
//    `#define DEVICE __host__ __device__`, counts), __device__ and
//    __constant__ variables, typedefs, `using` aliases, enums and structs
//    with no member functions but device ones and no std:: in them;
//  - every __device__ operator over a type the kept code names (a call to
//    `a + b` on float3 names no operator).
// Host functions, kernels and what names std:: are left out. A struct the
// kernel names that no header defines but gi knows (NIfTI's mat33, mat44:
// grammar/record_type.hpp) is defined at the top, as are <math.h>'s POSIX
// constants (M_PI) where the kept code names one.
#include <string>
#include <string_view>
#include <vector>

#include "grammar/token.hpp"

namespace gi {

// Its name in the seed folder, beside kernel.cu.
inline constexpr const char* kHeadersFile = "kernel_headers.cuh";

struct HeaderDeviceCode {
  std::string text;               // the file's content
  std::vector<std::string> kept;  // "IndexToDims (CudaCommon.hpp line 143)"
  std::vector<std::string> known; // well-known structs defined at the top ("mat33")
  bool math_constants = false;    // <math.h>'s M_PI and kin, which kernel.cu names, defined at the top
};

// `kernel_source`: kernel.cu as cut (grammar's view of what it names);
// `headers`: the local headers, in include order (IncludedHeaders::files).
HeaderDeviceCode header_device_code(std::string_view kernel_source, const std::string& file_name,
                                    const std::vector<grammar::SourceFile>& headers);

}  // namespace gi
