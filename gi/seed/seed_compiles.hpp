#pragma once
// Whether a seed folder's kernel.cu compiles with NVRTC, asked without a GPU
// (NVRTC builds cubins for sm_90 on any machine). `gi init` keeps the user's
// whole file, and a file whose other parts NVRTC cannot build (texture
// references, gone since CUDA 12; headers such as thrust's) would otherwise
// only fail on the GPU machine.
#include <filesystem>
#include <optional>
#include <string>

namespace gi {

// "" when the seed compiles at its spec's default block size; else NVRTC's
// reason and the first error line of its log. `compile_server`, where
// given, is the gi binary whose `nvrtc-serve` child makes the NVRTC call:
// NVRTC 13 crashes on some files a user brings (a template kernel whose
// parameter type no header left declares, as a cut without includes can
// be), and that must end in a reason, not take gi init down.
std::string seed_compile_problem(const std::filesystem::path& seed_dir, const std::string& arch = "sm_90",
                                 const std::optional<std::filesystem::path>& compile_server = std::nullopt);

}  // namespace gi
