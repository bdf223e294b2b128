#include "fitness/gpu/cuda_driver.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

#include "fitness/gpu/cuda_error.hpp"

namespace gi::fitness {

namespace {

// The ABI version every symbol is requested at: the signatures used here have
// not changed since CUDA 12.0 (cuFuncGetParamInfo came in 12.4).
constexpr unsigned kAbiVersion = 12000;
constexpr unsigned kParamInfoVersion = 12040;

template <typename F>
void resolve(F& function, const char* symbol, unsigned version, bool required) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &address, version, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || address == nullptr) {
    cudaGetLastError();  // not sticky, but keep it out of later checks
    if (!required) return;
    const std::string call = std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")";
    if (status != cudaSuccess) throw CudaError(call, status, describe_runtime_error(call.c_str(), status));
    throw CudaError(call, static_cast<int>(cudaErrorSymbolNotFound),
                    call + ": the driver has no such symbol at version " +
                        std::to_string(version) +
                        (found == cudaDriverEntryPointVersionNotSufficent ? " (driver too old)" : ""));
  }
  function = reinterpret_cast<F>(address);
}

DriverApi load_driver_api() {
  DriverApi api;
  resolve(api.get_error_name, "cuGetErrorName", kAbiVersion, true);
  resolve(api.get_error_string, "cuGetErrorString", kAbiVersion, true);
  resolve(api.module_load_data, "cuModuleLoadData", kAbiVersion, true);
  resolve(api.module_unload, "cuModuleUnload", kAbiVersion, true);
  resolve(api.module_get_function, "cuModuleGetFunction", kAbiVersion, true);
  resolve(api.module_get_global, "cuModuleGetGlobal", kAbiVersion, true);
  resolve(api.func_get_attribute, "cuFuncGetAttribute", kAbiVersion, true);
  resolve(api.func_set_attribute, "cuFuncSetAttribute", kAbiVersion, true);
  resolve(api.func_get_param_info, "cuFuncGetParamInfo", kParamInfoVersion, false);
  resolve(api.module_get_function_count, "cuModuleGetFunctionCount", kParamInfoVersion, false);
  resolve(api.module_enumerate_functions, "cuModuleEnumerateFunctions", kParamInfoVersion, false);
  resolve(api.func_get_name, "cuFuncGetName", kParamInfoVersion, false);
  resolve(api.launch_kernel, "cuLaunchKernel", kAbiVersion, true);
  resolve(api.memset_d32_async, "cuMemsetD32Async", kAbiVersion, true);
  resolve(api.stream_query, "cuStreamQuery", kAbiVersion, true);
  return api;
}

}  // namespace

const DriverApi& driver_api() {
  // Not a function-local static with a throwing initialiser alone: a failed
  // first lookup (no driver) must be retried and must throw every time.
  static std::mutex mutex;
  static DriverApi api;
  static bool loaded = false;
  std::lock_guard lock(mutex);
  if (!loaded) {
    api = load_driver_api();
    loaded = true;
  }
  return api;
}

std::string describe_driver_error(const char* call, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  // The error functions may be missing when the lookup itself failed.
  try {
    const DriverApi& api = driver_api();
    api.get_error_name(code, &name);
    api.get_error_string(code, &text);
  } catch (const CudaError&) {
  }
  std::string message = std::string(call) + ": ";
  message += name ? name : "CUresult " + std::to_string(static_cast<int>(code));
  if (text) message += std::string(" (") + text + ")";
  return message;
}

void check_driver(CUresult code, const char* call) {
  if (code == CUDA_SUCCESS) return;
  throw CudaError(call, static_cast<int>(code), describe_driver_error(call, code));
}

}  // namespace gi::fitness
