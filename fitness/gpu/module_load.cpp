#include "fitness/gpu/module_load.hpp"

#include <cstring>
#include <vector>

#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/gpu/entry_symbol.hpp"

namespace gi::fitness {

namespace {

// The function of `module` whose demangled name is `entry` (entry_symbol.hpp),
// or nullptr with `problem` set.
CUfunction find_by_source_name(const DriverApi& api, CUmodule module, const std::string& entry, std::string& problem) {
  if (!api.module_get_function_count || !api.module_enumerate_functions || !api.func_get_name) {
    problem = "no function of that name, and this driver cannot list a module's functions to find a C++ kernel's "
              "mangled name (CUDA 12.4+ drivers can; or declare the kernel extern \"C\")";
    return nullptr;
  }
  unsigned count = 0;
  if (api.module_get_function_count(&count, module) != CUDA_SUCCESS || count == 0) {
    problem = "the module has no functions";
    return nullptr;
  }
  std::vector<CUfunction> functions(count);
  if (api.module_enumerate_functions(functions.data(), count, module) != CUDA_SUCCESS) {
    problem = "cuModuleEnumerateFunctions failed";
    return nullptr;
  }
  std::vector<std::string> names;
  for (CUfunction f : functions) {
    const char* name = nullptr;
    names.push_back(api.func_get_name(&name, f) == CUDA_SUCCESS && name ? name : "");
  }
  const EntryMatch m = match_entry(names, entry);
  if (m.symbol.empty()) {
    problem = m.problem;
    return nullptr;
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == m.symbol) return functions[i];
  return nullptr;
}

}  // namespace

ModuleLoad load_module(std::span<const char> image, const std::string& entry) {
  ModuleLoad m;
  if (image.empty()) {
    m.error = "empty module image for '" + entry + "'";
    return m;
  }
  const DriverApi& api = driver_api();
  // cuModuleLoadData takes no size: anything but an ELF cubin is read as
  // NUL-terminated text, so make sure it is terminated.
  std::vector<char> terminated;
  const char* data = image.data();
  const bool elf = image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
  if (!elf && image.back() != '\0') {
    terminated.assign(image.begin(), image.end());
    terminated.push_back('\0');
    data = terminated.data();
  }
  CUresult status = api.module_load_data(&m.module, data);
  if (status != CUDA_SUCCESS) {
    m.module = nullptr;
    m.error = describe_driver_error("cuModuleLoadData", status);
    return m;
  }
  status = api.module_get_function(&m.function, m.module, entry.c_str());
  if (status == CUDA_ERROR_NOT_FOUND) {
    // A C++ kernel's symbol is mangled: find it by its source name.
    std::string problem;
    m.function = find_by_source_name(api, m.module, entry, problem);
    if (m.function == nullptr) m.error = "cuModuleGetFunction(" + entry + "): " + problem;
  } else if (status != CUDA_SUCCESS) {
    m.error = describe_driver_error(("cuModuleGetFunction(" + entry + ")").c_str(), status);
  }
  if (!m.error.empty()) {
    api.module_unload(m.module);
    m.module = nullptr;
    m.function = nullptr;
  }
  return m;
}

}  // namespace gi::fitness
