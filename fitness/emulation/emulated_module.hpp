#pragma once
// A kernel compiled for the CPU emulator: its translation unit
// (fitness/emulation/emulation_source.hpp) built with g++ into a shared
// object and loaded with dlopen (RTLD_LOCAL, so modules never see each
// other's symbols). Shared objects are cached on disk by the SHA-256 of the
// translation unit, the compiler and its flags when a cache folder is given,
// and in this process by the same key either way.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gi::fitness::emulation {

struct EmulatorCompiler {
  // The C++ compiler: $GI_EMULATOR_CXX, else g++ (then c++) on the PATH.
  std::string program;
  // Where compiled shared objects are kept (<dir>/<2 hex>/<key>.so); none:
  // compiled into a temporary folder and deleted once loaded.
  std::optional<std::filesystem::path> cache_dir;
};

// The compiler flags every translation unit is built with.
const std::vector<std::string>& emulator_flags();

// The C++ compiler gi uses for emulation: $GI_EMULATOR_CXX, else g++ or c++
// found on the PATH; empty when there is none.
std::string find_emulator_compiler();

class EmulatedModule {
 public:
  ~EmulatedModule();
  EmulatedModule(const EmulatedModule&) = delete;
  EmulatedModule& operator=(const EmulatedModule&) = delete;

  // What gi_emulate_launch (the prelude) takes; the layout is the prelude's
  // gi_emu::Launch.
  struct Launch {
    unsigned grid[3], block[3];
    void** args;
    std::size_t dynamic_shared_bytes;
    std::size_t stack_bytes;
    volatile unsigned* where;
    void* volatile* stacks_begin;
    void* volatile* stacks_end;
  };
  using LaunchFunction = int (*)(const Launch*, char*, std::size_t);

  LaunchFunction launch() const { return launch_; }
  // The entry's parameters: how many, and each one's size in bytes.
  std::size_t parameter_count() const { return param_count_(); }
  std::size_t parameter_size(std::size_t i) const { return param_size_(i); }
  // Address of a global of the module (extern "C"), nullptr when absent.
  void* symbol(const std::string& name) const;
  // The bytes of the global `name` (its ELF symbol's size), 0 when unknown.
  std::size_t symbol_size(const std::string& name) const;
  const std::string& key() const { return key_; }

 private:
  friend struct ModuleLoader;
  EmulatedModule() = default;
  void* handle_ = nullptr;
  LaunchFunction launch_ = nullptr;
  std::size_t (*param_count_)() = nullptr;
  std::size_t (*param_size_)(std::size_t) = nullptr;
  std::string key_;
};

struct ModuleBuild {
  std::shared_ptr<const EmulatedModule> module;  // null when it failed
  std::string error;                             // compile or load failure, the compiler's first errors
  bool cache_hit = false;                        // loaded without compiling
  double compile_seconds = 0;
};

// Compiles (or finds in the caches) and loads `translation_unit`. Never
// throws for a unit that does not compile: `error` says why.
ModuleBuild build_emulated_module(const std::string& translation_unit, const EmulatorCompiler& compiler);

}  // namespace gi::fitness::emulation
