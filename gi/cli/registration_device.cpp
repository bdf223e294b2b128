#include "gi/cli/registration_device.hpp"

#include <cstdlib>

#include "gi/library/library_root.hpp"
#include "gi/publish/versions.hpp"
#include "gi/register/emulated_device.hpp"
#include "gi/register/gpu_device.hpp"

namespace gi::cli {
namespace fs = std::filesystem;

void add_kernel_choice_options(CLI::App* command, KernelChoice& c) {
  command->add_option("--kernels", c.kernels,
                      "seeds (default), evolved (this GPU's folder in the library's evolved/) or a folder "
                      "evolved/<gpu>; a kernel without an evolved folder runs as its seed, and the log says which");
  command->add_option("--seeds", c.seeds,
                      "the seed library (its specs give every launch; default: the library's seeds/, see gi doctor)");
  command->add_option("--device", c.device, "CUDA device (default 0)");
  command->add_option("--cache-dir", c.cache_dir,
                      "compile cache folder, kept between runs (default: $XDG_CACHE_HOME/gi, else ~/.cache/gi)");
  command->add_flag("--no-cache", c.no_cache, "compile every kernel afresh and keep nothing");
  command->add_flag("--emulate", c.emulate, "run the kernels in the CPU emulator (tests; tiny images only)");
}

fs::path default_compile_cache() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') return fs::path(xdg) / "gi";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return fs::path(home) / ".cache" / "gi";
  return {};
}

RegistrationDevice open_registration_device(const KernelChoice& c) {
  RegistrationDevice r;
  reg::KernelSetOptions& ko = r.kernel_options;
  ko.seeds_root = c.seeds.empty() ? library().seeds() : fs::path(c.seeds);
  if (c.no_cache && !c.cache_dir.empty()) throw std::runtime_error("--no-cache and --cache-dir exclude each other");
  const fs::path cache = c.no_cache ? fs::path() : c.cache_dir.empty() ? default_compile_cache() : fs::path(c.cache_dir);
  if (!cache.empty()) ko.cache_dir = cache;
  std::string gpu_name;
  if (c.emulate) {
    r.device = std::make_unique<reg::EmulatedDevice>();
  } else {
    auto gpu = std::make_unique<reg::GpuDevice>(c.device);
    ko.arch = gpu->arch();
    gpu_name = gpu->name();
    r.device = std::move(gpu);
  }
  if (c.kernels == "evolved") {
    if (gpu_name.empty()) throw std::runtime_error("--kernels evolved needs a GPU; name the folder: --kernels evolved/<gpu>");
    ko.evolved_dir = library().evolved() / gpu_slug(gpu_name);
  } else if (c.kernels != "seeds") {
    // evolved/<gpu> names the library's folder unless the working directory has one.
    fs::path folder(c.kernels);
    std::error_code ec;
    if (folder.is_relative() && !fs::exists(folder, ec) && fs::exists(library().root / folder, ec))
      folder = library().root / folder;
    ko.evolved_dir = folder;
  }
  return r;
}

}  // namespace gi::cli
