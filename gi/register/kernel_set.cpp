#include "gi/register/kernel_set.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "gi/evaluate/variant_build.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/seed/seed.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"

namespace gi::reg {
namespace fs = std::filesystem;

fs::path evolved_folder(const fs::path& evolved_dir, const std::string& name) {
  std::string folder = name;
  const auto slash = folder.find('/');
  if (slash == std::string::npos) throw std::runtime_error("kernel name '" + name + "' is not <family>/<kernel>");
  folder[slash] = '-';
  return evolved_dir / folder;
}

namespace {

// The tuning an evolved folder was published with; its patch is pinned to
// the seed (read_patch_for).
Tuning published_tuning(const fs::path& folder) {
  const fs::path result_file = folder / "result.json";
  try {
    return tuning_from_json(nlohmann::json::parse(read_text_file(result_file)).at("tuning").at("evolved"));
  } catch (const std::exception& e) {
    throw std::runtime_error(result_file.string() + ": " + e.what());
  }
}

// The kernel as the set runs it, and what to compile for it (an empty
// source when the options name no GPU architecture).
struct Resolved {
  RegistrationKernel kernel;
  fitness::CompileRequest request;
};

Resolved resolve(const std::string& name, const KernelSetOptions& options) {
  const fs::path seed_dir = options.seeds_root / name;
  if (!fs::exists(seed_dir / "spec.json"))
    throw std::runtime_error("kernel " + name + ": no seed at " + seed_dir.string());
  RegistrationKernel k;
  k.name = name;
  k.spec = fitness::load_kernel_spec(seed_dir);
  const Seed seed = load_seed(seed_dir);
  const fs::path folder = options.evolved_dir ? evolved_folder(*options.evolved_dir, name) : fs::path();
  k.evolved = options.evolved_dir && fs::exists(folder / "patch.gi");
  // The seed as written runs at its default block size, with no extra options.
  const grammar::Patch patch = k.evolved ? read_patch_for(seed, folder / "patch.gi") : grammar::Patch{};
  k.tuning = k.evolved ? published_tuning(folder) : Tuning{k.spec.default_block_size, {}};
  const VariantSource variant = variant_source(seed, patch);
  // The published kernel.cu must be exactly the patch applied to this seed,
  // or the folder is out of date.
  if (k.evolved && variant.source != read_text_file(folder / "kernel.cu"))
    throw std::runtime_error((folder / "kernel.cu").string() +
                             ": is not patch.gi applied to the seed; publish the kernel again");
  k.compile_source = variant.compile_source;
  k.launch = variant.launch;
  if (k.evolved)
    k.origin = "evolved " + folder.string() + " (block " + std::to_string(k.tuning.block_size) +
               (k.tuning.options.empty() ? "" : ", " + k.tuning.options.front()) + ")";
  else
    k.origin = "seed " + seed_dir.string() +
               (options.evolved_dir ? " (no evolved kernel in " + options.evolved_dir->string() + ")" : "");
  fitness::CompileRequest request;
  if (!options.arch.empty()) request = variant_request(variant, seed, k.tuning, options.arch);
  return {std::move(k), std::move(request)};
}

}  // namespace

KernelSet::KernelSet(const std::vector<std::string>& names, const KernelSetOptions& options) {
  if (options.evolved_dir && !fs::is_directory(*options.evolved_dir))
    throw std::runtime_error(options.evolved_dir->string() + ": not a folder of evolved kernels (evolved/<gpu>)");
  std::vector<Resolved> resolved;
  for (const std::string& name : names) resolved.push_back(resolve(name, options));
  if (!options.arch.empty()) {
    // One compiler (and its cache) for the whole set, its kernels compiled
    // in parallel: a run's start-up waits for the slowest, not for the sum.
    fitness::Compiler compiler(options.cache_dir ? std::optional<fs::path>(*options.cache_dir / "compile") : std::nullopt);
    std::vector<fitness::CompileRequest> requests;
    for (const Resolved& r : resolved) requests.push_back(r.request);
    const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::vector<fitness::CompileResult> built = compiler.compile_all(requests, jobs);
    for (std::size_t i = 0; i < resolved.size(); ++i) {
      RegistrationKernel& k = resolved[i].kernel;
      if (!built[i].ok) throw std::runtime_error("kernel " + k.name + " (" + k.origin + ") does not compile: " + built[i].error);
      k.binary = built[i].cubin;
    }
    const fitness::Compiler::Stats stats = compiler.stats();
    compile_stats_ = {stats.hits, stats.compiles, stats.total_compile_seconds};
  }
  for (Resolved& r : resolved) kernels_.emplace(r.kernel.name, std::move(r.kernel));
}

const RegistrationKernel& KernelSet::get(const std::string& name) const {
  const auto it = kernels_.find(name);
  if (it == kernels_.end()) throw std::logic_error("kernel " + name + " was not loaded into the kernel set");
  return it->second;
}

}  // namespace gi::reg
