#pragma once
// Run-time compilation of kernel variants with NVRTC: to a cubin (sm_XX) or
// PTX (compute_XX), with ptxas resource usage, a content-addressed on-disk
// cache, and parallel batches. Compiling is the bottleneck of an evaluation.
#include <nvrtc.h>

#include <filesystem>
#include <future>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fitness/compile/compile_cache.hpp"
#include "fitness/compile/compile_types.hpp"
#include "fitness/compile/ptx_assembler.hpp"

namespace gi::fitness {

class CompileServerPool;

// NVRTC's version as "major.minor", e.g. "13.0".
std::string nvrtc_version();

// The targets this NVRTC can compile for, e.g. {"sm_75", ..., "sm_120"}.
std::vector<std::string> nvrtc_supported_archs();

// SHA-256 over the whitespace-normalised source, file name, options (in
// order), arch and NVRTC version: layout-only differences share a key.
std::string compile_key(const CompileRequest& request);

// What one NVRTC call gave: PTX (compute_XX) or a cubin (sm_XX) in `binary`.
struct NvrtcOutput {
  nvrtcResult last = NVRTC_SUCCESS;
  bool ok = false;
  std::string log, error;
  std::vector<char> binary;
};

// The CUDA toolkit's include folder ($CUDA_HOME/include, /usr/local/cuda/include),
// which every NVRTC call searches after a request's own; empty when none.
const std::filesystem::path& toolkit_include_dir();
// Every toolkit folder an NVRTC call searches: toolkit_include_dir() and,
// where the toolkit has it, its CCCL folder (include/cccl: CUDA 13 keeps
// libcu++, CUB and Thrust there, and cooperative_groups.h includes
// <cuda/std/type_traits> from it); empty when there is no toolkit.
const std::vector<std::filesystem::path>& toolkit_include_dirs();

NvrtcOutput nvrtc_compile_once(const CompileRequest& request, const std::string& arch,
                               const std::vector<std::string>& options);

class Compiler {
 public:
  // No cache when `cache_dir` is empty: every compile calls NVRTC.
  explicit Compiler(std::optional<std::filesystem::path> cache_dir);

  // Never throws: every failure is a result with ok=false and `error` set.
  // Safe to call from several threads at once.
  CompileResult compile(const CompileRequest& request);

  // Results in request order. Identical keys in the batch are compiled once;
  // the copies come back with cache_hit=true.
  std::vector<CompileResult> compile_all(const std::vector<CompileRequest>& requests, int jobs);

  struct Stats {
    long hits = 0;             // served without an NVRTC call
    long misses = 0;           // needed an NVRTC call
    long compiles = 0;         // NVRTC calls made
    long ptx_reuses = 0;       // two-stage compiles whose PTX was already assembled (no ptxas run)
    long failures = 0;         // of those, how many did not produce a binary
    long corrupt_entries = 0;  // cache entries found damaged (read as misses)
    double total_compile_seconds = 0;
    std::string last_cache_problem;  // the latest corrupt entry or write failure
  };
  Stats stats() const;

  // Two-stage compiles (on by default when a ptxas of NVRTC's release is
  // found): NVRTC to PTX, then ptxas once per distinct PTX. Off: one NVRTC
  // call straight to the cubin. The same ptxas runs either way.
  void set_two_stage(bool on) { want_two_stage_ = on; }
  // Whether compiles are two-stage: asked for, and a ptxas of NVRTC's release
  // was found (looked for on first use, not when a Compiler is made).
  bool two_stage() const { return want_two_stage_ && ptx_assembler_available(); }
  // Make NVRTC calls on `servers` long-lived compile servers (`executable
  // nvrtc-serve`, fitness/compile/compile_server.hpp) instead of in this process:
  // NVRTC scales poorly over threads, well over processes.
  void set_compile_servers(const std::filesystem::path& executable, int servers);

 private:
  CompileResult compile_uncached(const CompileRequest& request, const std::string& key);
  // The cubin of this PTX: assembled by the first compile that needs it,
  // shared with every later (or concurrent) one.
  std::shared_ptr<const Assembly> assemble_once(const std::string& key, const std::vector<char>& ptx,
                                                const std::string& arch, const std::vector<std::string>& back,
                                                bool* reused);

  NvrtcOutput nvrtc_stage(const CompileRequest& request, const std::string& arch,
                          const std::vector<std::string>& options) const;

  static constexpr std::size_t kMaxAssembled = 8192;
  std::shared_ptr<CompileServerPool> servers_;  // null: NVRTC in this process
  bool want_two_stage_ = true;
  std::mutex assembled_mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Assembly>>> assembled_;

  std::optional<CompileCache> cache_;
  mutable std::mutex stats_mutex_;
  Stats stats_;
};

}  // namespace gi::fitness
