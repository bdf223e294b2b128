#include "fitness/emulation/emulated_module.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>

#include "fitness/process/subprocess.hpp"
#include "grammar/source_hash.hpp"

namespace gi::fitness::emulation {

namespace {

std::string executable_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// The first lines of a compiler log that say what is wrong.
std::string first_errors(const std::string& log) {
  std::stringstream in(log);
  std::string line, out;
  int kept = 0;
  while (std::getline(in, line) && kept < 12) {
    if (line.find("error") == std::string::npos && line.find("note") == std::string::npos) continue;
    out += (out.empty() ? "" : "\n") + line;
    ++kept;
  }
  return out.empty() ? log.substr(0, 2000) : out;
}

// A temporary folder of this process, removed when it exits.
std::filesystem::path scratch_dir() {
  struct Scratch {
    std::filesystem::path dir;
    Scratch() {
      std::string pattern = (std::filesystem::temp_directory_path() / "gi-emulator-XXXXXX").string();
      if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary folder for the emulator");
      dir = pattern;
    }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

struct ModuleLoader {
  static std::shared_ptr<const EmulatedModule> load(const std::filesystem::path& file, const std::string& key,
                                                    std::string& error) {
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      error = "cannot load " + file.string() + ": " + (why ? why : "dlopen failed");
      return nullptr;
    }
    std::shared_ptr<EmulatedModule> m(new EmulatedModule);
    m->handle_ = handle;
    m->key_ = key;
    m->launch_ = reinterpret_cast<EmulatedModule::LaunchFunction>(dlsym(handle, "gi_emulate_launch"));
    m->param_count_ = reinterpret_cast<std::size_t (*)()>(dlsym(handle, "gi_emulator_param_count"));
    m->param_size_ = reinterpret_cast<std::size_t (*)(std::size_t)>(dlsym(handle, "gi_emulator_param_size"));
    if (!m->launch_ || !m->param_count_ || !m->param_size_) {
      error = file.string() + " is not an emulated kernel (gi_emulate_launch missing)";
      return nullptr;
    }
    return m;
  }
};

EmulatedModule::~EmulatedModule() {
  if (handle_) dlclose(handle_);
}

void* EmulatedModule::symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

std::size_t EmulatedModule::symbol_size(const std::string& name) const {
  void* address = symbol(name);
  Dl_info info;
  void* entry = nullptr;
  if (address == nullptr || dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return 0;
  return static_cast<const ElfW(Sym)*>(entry)->st_size;
}

const std::vector<std::string>& emulator_flags() {
  // -ffp-contract=off: float arithmetic as written (the GPU may fuse
  // multiply-adds; tolerances allow for both). -fno-strict-aliasing: kernels
  // may type-pun through pointers as nvcc allows. -fstack-clash-protection:
  // a large local array touches the guard page below a thread's stack rather
  // than jumping over it into the next thread's.
  static const std::vector<std::string> flags{"-std=c++20", "-O1",          "-shared",
                                              "-fPIC",      "-w",           "-fno-strict-aliasing",
                                              "-ffp-contract=off", "-fno-math-errno",
                                              "-fstack-clash-protection"};
  return flags;
}

std::string find_emulator_compiler() {
  if (const char* env = std::getenv("GI_EMULATOR_CXX"); env && *env) return executable_on_path(env);
  for (const char* name : {"g++", "c++"})
    if (std::string found = executable_on_path(name); !found.empty()) return found;
  return "";
}

ModuleBuild build_emulated_module(const std::string& translation_unit, const EmulatorCompiler& compiler) {
  ModuleBuild build;
  const std::string program = compiler.program.empty() ? find_emulator_compiler() : compiler.program;
  if (program.empty()) {
    build.error = "no C++ compiler for the emulator (g++ or c++ on the PATH, or $GI_EMULATOR_CXX)";
    return build;
  }
  std::string identity = program;
  for (const std::string& f : emulator_flags()) identity += " " + f;
  const std::string key = grammar::sha256_hex(identity + "\n" + translation_unit);

  // In this process: one module per key.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const EmulatedModule>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(key); it != loaded.end())
    if (auto m = it->second.lock()) {
      build.module = m;
      build.cache_hit = true;
      return build;
    }

  std::error_code ec;
  const std::filesystem::path dir = compiler.cache_dir ? *compiler.cache_dir / key.substr(0, 2) : scratch_dir();
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path target = dir / (key + ".so");
  if (compiler.cache_dir && std::filesystem::exists(target, ec)) {
    std::string error;
    if (auto m = ModuleLoader::load(target, key, error)) {
      loaded[key] = m;
      build.module = m;
      build.cache_hit = true;
      return build;
    }
    std::filesystem::remove(target, ec);  // a damaged entry: build it anew
  }

  const std::string suffix = unique_suffix();
  const std::filesystem::path source = dir / (key + "." + suffix + ".cpp");
  const std::filesystem::path object = dir / (key + "." + suffix + ".so");
  const std::filesystem::path log = dir / (key + "." + suffix + ".log");
  {
    std::ofstream out(source, std::ios::binary);
    out << translation_unit;
    if (!out) {
      build.error = "cannot write " + source.string();
      return build;
    }
  }
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), emulator_flags().begin(), emulator_flags().end());
  argv.insert(argv.end(), {source.string(), "-o", object.string()});
  const auto start = std::chrono::steady_clock::now();
  const SubprocessResult r = run_subprocess(argv, log);
  build.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::filesystem::remove(log, ec);
  if (!r.problem.empty() || r.exit_code != 0) {
    build.error = !r.problem.empty() ? r.problem
                                     : "the kernel does not compile for the CPU emulator (" + program + "):\n" +
                                           first_errors(r.output);
    std::filesystem::remove(object, ec);
    // Kept beside the cache entry for a reader; removed otherwise.
    if (!compiler.cache_dir) std::filesystem::remove(source, ec);
    return build;
  }
  std::filesystem::remove(source, ec);
  std::filesystem::path file = object;
  if (compiler.cache_dir) {
    std::filesystem::rename(object, target, ec);
    if (!ec) file = target;
  }
  std::string error;
  auto m = ModuleLoader::load(file, key, error);
  if (!compiler.cache_dir || file == object) std::filesystem::remove(object, ec);  // loaded: the mapping stays
  if (!m) {
    build.error = error;
    return build;
  }
  loaded[key] = m;
  build.module = m;
  return build;
}

}  // namespace gi::fitness::emulation
