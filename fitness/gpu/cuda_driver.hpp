#pragma once
// The CUDA driver API without linking libcuda: its functions are looked up
// at run time through the (statically linked) runtime, so the binary still
// starts on a machine with no driver, and only GPU paths fail there.
#include <cuda.h>

#include <string>

namespace gi::fitness {

// The driver functions gi uses, resolved once.
struct DriverApi {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuModuleGetGlobal) module_get_global = nullptr;  // a __device__ variable's address and size
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  // CUDA 12.4+ drivers only; nullptr on older ones (parameter checks are skipped).
  decltype(&::cuFuncGetParamInfo) func_get_param_info = nullptr;
  // CUDA 12.4+ drivers only; nullptr on older ones (a C++ kernel's mangled
  // name is then not looked up by its source name: fitness/gpu/entry_symbol.hpp).
  decltype(&::cuModuleGetFunctionCount) module_get_function_count = nullptr;
  decltype(&::cuModuleEnumerateFunctions) module_enumerate_functions = nullptr;
  decltype(&::cuFuncGetName) func_get_name = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuMemsetD32Async) memset_d32_async = nullptr;
  decltype(&::cuStreamQuery) stream_query = nullptr;
};

// Resolves the functions on first use. Throws CudaError naming the symbol
// when the driver is missing or too old.
const DriverApi& driver_api();

// "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)"
std::string describe_driver_error(const char* call, CUresult code);

// Throws CudaError naming `call` unless `code` is CUDA_SUCCESS.
void check_driver(CUresult code, const char* call);

}  // namespace gi::fitness
