#pragma once
// A patched variant as gi compiles, checks, times and publishes it: the seed
// with the patch applied and its switches resolved (the chosen paths kept,
// dead ones and the directives removed: grammar/switches.hpp), its launch
// effect (switch values, coarsening), compiled with a tuning's options for
// one device. The search, validation, the sanitizers, the interleaved timing
// and the published kernel.cu all use exactly this source.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fitness/compile/compile_types.hpp"
#include "gi/evaluate/evaluator.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/patch_effect.hpp"

namespace gi {

// The options every variant is compiled with before a tuning's own.
// -default-device: what gi sets aside of a real file's host code but cannot
// blank (function prototypes such as the toolkit cuda.h's driver API, host
// globals, class statics) is taken as device code instead of an error; the
// device code that is compiled stays as it was (bench/corpus/compile_results_*.md).
inline const std::vector<std::string>& base_compile_options() {
  static const std::vector<std::string> options{"--std=c++17", "-default-device"};
  return options;
}

// "sm_90" for a compute capability 9.0 device; throws "no CUDA device: ..."
// when `device` is not there.
std::string device_arch(int device);

struct VariantSource {
  std::string source;            // published form: switches resolved
  std::string compile_source;    // what NVRTC compiles: `source` with its host functions blank
  grammar::LaunchEffect launch;  // what the patch does to the launch
};

// Throws grammar::PatchError naming the edit, or the switch setting the
// seed does not allow.
VariantSource variant_source(const Seed& seed, const grammar::Patch& patch);

// A template kernel's instance is in the binary only when NVRTC is told to
// emit it (the runner then finds it by its source name): the spec's entry
// when it names one (`scale<float, 2>`), else nothing.
std::vector<std::string> seed_name_expressions(const Seed& seed);

// The compile request of a patched variant: its published source, base
// options, the seed's own (gi/seed/seed_build.hpp) then the tuning's, and the
// seed's headers.
fitness::CompileRequest variant_request(const VariantSource& variant, const Seed& seed, const Tuning& tuning,
                                        const std::string& arch);
// The same for any text NVRTC is to compile as the seed's file (e.g. the
// seed instrumented for coverage).
fitness::CompileRequest variant_request(const std::string& compile_source, const Seed& seed, const Tuning& tuning,
                                        const std::string& arch);

struct BuiltVariant {
  fitness::CompileResult binary;  // ok=false with the error when it does not compile
  grammar::LaunchEffect launch;
};

// Applies `patch` (throws grammar::PatchError naming the edit) and compiles
// the result for `arch`; the compile cache is used when `cache_dir` is given.
BuiltVariant compile_variant(const Seed& seed, const grammar::Patch& patch, const Tuning& tuning,
                             const std::string& arch, const std::optional<std::filesystem::path>& cache_dir);

}  // namespace gi
