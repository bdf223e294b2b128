#pragma once
// Plain value types of a compilation, shared by the compiler and its on-disk
// cache (kept apart so the cache does not depend on NVRTC).
#include <string>
#include <utility>
#include <vector>

namespace gi::fitness {

struct CompileRequest {
  std::string source;
  std::string file_name = "kernel.cu";  // appears in the log and in __FILE__
  // Extra NVRTC options. The target is given by `arch` alone; -Xptxas=-v is
  // always added by the compiler.
  std::vector<std::string> options;
  std::string arch = "sm_90";  // "sm_XX" gives a cubin, "compute_XX" gives PTX
  // Headers NVRTC is given with their text: (name as an #include writes it,
  // text). Part of the cache key, so an edited header is compiled afresh.
  std::vector<std::pair<std::string, std::string>> headers;
  // C++ names NVRTC must emit (nvrtcAddNameExpression): a template kernel's
  // instance (`scale<float, 2>`) exists in the binary only when named.
  std::vector<std::string> name_expressions;
};

struct CompileResult {
  bool ok = false;
  std::string log;    // NVRTC's program log, in full (includes ptxas -v output)
  std::string error;  // empty when ok; otherwise what failed, in one line
  // The cubin, or the PTX text (NUL-terminated, as cuModuleLoadData wants it)
  // when is_ptx.
  std::vector<char> cubin;
  bool is_ptx = false;
  // From ptxas -v: the worst function of the module; -1 when unknown (PTX).
  int registers = -1;
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  int stack_frame_bytes = -1;
  double compile_seconds = 0;  // NVRTC time of the compile that produced this
  bool cache_hit = false;      // true when no NVRTC call was made for it
  bool ptx_reused = false;     // two-stage: its PTX was assembled before, ptxas did not run
  std::string key;             // compile_key() of the request
};

}  // namespace gi::fitness
