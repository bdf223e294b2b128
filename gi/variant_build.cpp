#include "gi/variant_build.hpp"

#include <stdexcept>

#include "fitness/cuda_devices.hpp"
#include "fitness/nvrtc_compiler.hpp"
#include "grammar/patch_apply.hpp"

namespace gi {

std::string device_arch(int device) {
  const fitness::CudaEnvironment env = fitness::probe_cuda();
  if (!env.driver_ok || device < 0 || device >= static_cast<int>(env.gpus.size()))
    throw std::runtime_error("no CUDA device: device " + std::to_string(device) + " requested (" + env.message + ")");
  const auto& g = env.gpus[static_cast<std::size_t>(device)];
  return "sm_" + std::to_string(g.cc_major) + std::to_string(g.cc_minor);
}

fitness::CompileRequest variant_request(const Seed& seed, const grammar::Patch& patch, const Tuning& tuning,
                                        const std::string& arch) {
  fitness::CompileRequest request;
  request.source = grammar::apply_patch(seed.grammar, patch);
  request.file_name = seed.grammar.file_name();
  request.options = base_compile_options();
  request.options.insert(request.options.end(), tuning.options.begin(), tuning.options.end());
  request.arch = arch;
  return request;
}

fitness::CompileResult compile_variant(const Seed& seed, const grammar::Patch& patch, const Tuning& tuning,
                                       const std::string& arch,
                                       const std::optional<std::filesystem::path>& cache_dir) {
  const fitness::CompileRequest request = variant_request(seed, patch, tuning, arch);
  fitness::Compiler compiler(cache_dir ? std::optional<std::filesystem::path>(*cache_dir / "compile") : std::nullopt);
  return compiler.compile(request);
}

}  // namespace gi
