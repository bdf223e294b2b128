#pragma once
// A patched variant as the post-evolution stages need it outside the search:
// its source under a patch, compiled with a tuning's options for one device.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fitness/compile_types.hpp"
#include "gi/evaluator.hpp"
#include "gi/seed.hpp"

namespace gi {

// The options every variant is compiled with before a tuning's own.
inline const std::vector<std::string>& base_compile_options() {
  static const std::vector<std::string> options{"--std=c++17"};
  return options;
}

// "sm_90" for a compute capability 9.0 device; throws "no CUDA device: ..."
// when `device` is not there.
std::string device_arch(int device);

// The compile request of a patched variant: the seed with `patch` applied
// (throws grammar::PatchError naming the edit), base options then the tuning's.
fitness::CompileRequest variant_request(const Seed& seed, const grammar::Patch& patch, const Tuning& tuning,
                                        const std::string& arch);

// Applies `patch` (throws grammar::PatchError naming the edit) and compiles
// the result for `arch`; the compile cache is used when `cache_dir` is given.
// A failed compile comes back with ok=false and the error.
fitness::CompileResult compile_variant(const Seed& seed, const grammar::Patch& patch, const Tuning& tuning,
                                       const std::string& arch,
                                       const std::optional<std::filesystem::path>& cache_dir);

}  // namespace gi
