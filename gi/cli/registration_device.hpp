#pragma once
// What `gi register` and `gi transform` share: which kernels run (the seeds
// or evolved ones), on which device (a GPU, or the CPU emulator for tests),
// and the compile cache they keep between runs.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_set.hpp"

namespace gi::cli {

struct KernelChoice {
  std::string kernels = "seeds";  // seeds, evolved, or a folder evolved/<gpu>
  std::string seeds;              // empty: the library's seeds/
  std::string cache_dir;          // empty: default_compile_cache()
  bool no_cache = false;
  int device = 0;
  bool emulate = false;
};

// Adds --kernels, --seeds, --device, --cache-dir, --no-cache and --emulate.
void add_kernel_choice_options(CLI::App* command, KernelChoice& choice);

// Where compiled kernels are kept between runs when --cache-dir is not
// given: $XDG_CACHE_HOME/gi, else $HOME/.cache/gi; empty when neither is set.
std::filesystem::path default_compile_cache();

struct RegistrationDevice {
  std::unique_ptr<reg::ComputeDevice> device;
  reg::KernelSetOptions kernel_options;  // seeds, evolved folder, cache and architecture for reg::KernelSet
};

// Opens the GPU (or the emulator) and resolves --kernels against it. Throws
// std::runtime_error naming the problem (no GPU, --kernels evolved without
// one, an evolved folder that does not exist is reported by reg::KernelSet).
RegistrationDevice open_registration_device(const KernelChoice& choice);

}  // namespace gi::cli
