#include "gi/evaluate/variant_build.hpp"

#include <stdexcept>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/gpu/entry_symbol.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/switches.hpp"

namespace gi {

std::string device_arch(int device) {
  const fitness::CudaEnvironment env = fitness::probe_cuda();
  if (!env.driver_ok || device < 0 || device >= static_cast<int>(env.gpus.size()))
    throw std::runtime_error("no CUDA device: device " + std::to_string(device) + " requested (" + env.message + ")");
  const auto& g = env.gpus[static_cast<std::size_t>(device)];
  return "sm_" + std::to_string(g.cc_major) + std::to_string(g.cc_minor);
}

VariantSource variant_source(const Seed& seed, const grammar::Patch& patch) {
  grammar::PatchedKernel patched = grammar::patch_kernel(seed.grammar, patch, seed.context);
  const std::string& file = seed.grammar.file_name();
  std::string published = grammar::resolve_switches(patched.source, patched.launch.switches, file);
  // Most seeds have no host code: one resolution serves both.
  std::string compiled = patched.device_source == patched.source
                             ? published
                             : grammar::resolve_switches(patched.device_source, patched.launch.switches, file);
  return VariantSource{std::move(published), std::move(compiled), std::move(patched.launch)};
}

std::vector<std::string> seed_name_expressions(const Seed& seed) {
  if (!seed.spec || !seed.spec->contains("entry") || !seed.spec->at("entry").is_string()) return {};
  const std::string entry = seed.spec->at("entry").get<std::string>();
  if (!fitness::entry_is_template_instance(entry)) return {};
  return {entry};
}

fitness::CompileRequest variant_request(const VariantSource& variant, const Seed& seed, const Tuning& tuning,
                                        const std::string& arch) {
  return variant_request(variant.compile_source, seed, tuning, arch);
}

fitness::CompileRequest variant_request(const std::string& compile_source, const Seed& seed, const Tuning& tuning,
                                        const std::string& arch) {
  fitness::CompileRequest request;
  request.source = compile_source;
  request.file_name = seed.grammar.file_name();
  request.options = base_compile_options();
  const std::vector<std::string> build_options = seed.build.compile_options();
  request.options.insert(request.options.end(), build_options.begin(), build_options.end());
  request.options.insert(request.options.end(), tuning.options.begin(), tuning.options.end());
  request.headers = seed.build.headers;
  request.name_expressions = seed_name_expressions(seed);
  request.arch = arch;
  return request;
}

BuiltVariant compile_variant(const Seed& seed, const grammar::Patch& patch, const Tuning& tuning,
                             const std::string& arch, const std::optional<std::filesystem::path>& cache_dir) {
  const VariantSource variant = variant_source(seed, patch);
  fitness::Compiler compiler(cache_dir ? std::optional<std::filesystem::path>(*cache_dir / "compile") : std::nullopt);
  return BuiltVariant{compiler.compile(variant_request(variant, seed, tuning, arch)), variant.launch};
}

}  // namespace gi
