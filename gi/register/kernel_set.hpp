#pragma once
// The library kernels one registration runs, each resolved once from its
// seed folder (seeds/<family>/<kernel>) or from a folder of evolved kernels
// (evolved/<gpu>/<family>-<kernel>: the published patch applied to the seed,
// with its published tuning). The kernel folder is the only thing that
// differs between a run on the seeds and a run on the evolved kernels: the
// spec (parameters, launch geometry) always comes from the seed.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "grammar/patch_effect.hpp"

namespace gi::reg {

struct RegistrationKernel {
  std::string name;  // "bspline/deformation_field"
  fitness::KernelSpec spec;
  Tuning tuning;                 // block size and NVRTC options it runs with
  grammar::LaunchEffect launch;  // switch values and coarsening of the variant
  std::string origin;            // for the log: "seed seeds/..." or "evolved evolved/<gpu>/..."
  bool evolved = false;
  std::string compile_source;    // what NVRTC or the emulator compiles (switches resolved)
  std::vector<char> binary;      // cubin (or PTX); empty unless compiled for a GPU
};

struct KernelSetOptions {
  std::filesystem::path seeds_root;                   // seeds/
  std::optional<std::filesystem::path> evolved_dir;   // evolved/<gpu>; none: every kernel is its seed
  std::optional<std::filesystem::path> cache_dir;     // compile cache
  std::string arch;                                   // "sm_90"; empty: not compiled (the CPU emulator compiles)
};

class KernelSet {
 public:
  // Resolves and (with an arch) compiles every kernel in `names`. Throws
  // std::runtime_error naming the kernel and folder: a missing seed, an
  // evolved folder whose patch is pinned to another seed version or whose
  // kernel.cu is not its patch applied to the seed, a compile error.
  KernelSet(const std::vector<std::string>& names, const KernelSetOptions& options);

  const RegistrationKernel& get(const std::string& name) const;
  const std::map<std::string, RegistrationKernel>& kernels() const { return kernels_; }

  // How the set was compiled: kernels served by the compile cache, NVRTC
  // calls made, and their seconds summed over the parallel jobs.
  struct CompileStats {
    long cache_hits = 0, compiles = 0;
    double compile_seconds = 0;
  };
  const CompileStats& compile_stats() const { return compile_stats_; }

 private:
  std::map<std::string, RegistrationKernel> kernels_;
  CompileStats compile_stats_;
};

// The evolved folder of `name` ("bspline/deformation_field" ->
// "<dir>/bspline-deformation_field").
std::filesystem::path evolved_folder(const std::filesystem::path& evolved_dir, const std::string& name);

}  // namespace gi::reg
