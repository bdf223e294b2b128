#pragma once
// A kernel cut out of a file NVRTC cannot build whole. gi init keeps the
// user's file as kernel.cu; when other parts of it do not compile (texture
// references, which CUDA 12 removed; kernels that need cuBLAS or thrust
// headers), the entry kernel alone often does. The cut blanks, keeping every
// line where it was (so line numbers in the spec and in reports stay the
// file's):
//  - the __global__ and __device__ functions the entry does not reach
//    (grammar/call_graph.hpp);
//  - file-level declarations none of the kept functions names (a texture
//    reference, a __constant__ array of another kernel);
//  - with `drop_includes`, every #include line.
// Host code is left as it is: every compile sets it aside already.
#include <string>
#include <string_view>
#include <vector>

namespace gi {

struct KernelCut {
  std::string source;
  std::vector<std::string> dropped;  // what was blanked: "function 'k2' (lines 40-61)", "#include <thrust/sort.h> (line 6)"
};

KernelCut cut_kernel(std::string_view source, const std::string& file_name, const std::string& entry, bool drop_includes);

}  // namespace gi
