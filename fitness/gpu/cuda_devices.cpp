#include "fitness/gpu/cuda_devices.hpp"

#include <cuda_runtime_api.h>

#include <array>

#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/gpu/cuda_error.hpp"

namespace gi::fitness {

OpenedDevice open_device(int device) {
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  if (probe != cudaSuccess || device < 0 || device >= count) {
    cudaGetLastError();
    const std::string why = probe != cudaSuccess ? describe_runtime_error("cudaGetDeviceCount", probe)
                                                 : "device " + std::to_string(device) + " requested, " +
                                                       std::to_string(count) + " present";
    throw CudaError("cudaGetDeviceCount", probe, "no CUDA device: " + why);
  }
  check_runtime(cudaSetDevice(device), "cudaSetDevice");
  check_runtime(cudaFree(nullptr), "cudaFree(0) (context creation)");
  cudaDeviceProp prop{};
  check_runtime(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  driver_api();  // fail here, not in the middle of a run, when the driver lacks a symbol
  return OpenedDevice{prop.name, "sm_" + std::to_string(prop.major) + std::to_string(prop.minor)};
}

std::string cuda_version_string(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) return 0;
  return value;
}

}  // namespace

CudaEnvironment probe_cuda() {
  CudaEnvironment env;
  env.toolkit_version = CUDART_VERSION;
  // Both version queries work without a driver (driver version then reads 0).
  if (cudaDriverGetVersion(&env.driver_version) != cudaSuccess) env.driver_version = 0;
  if (cudaRuntimeGetVersion(&env.runtime_version) != cudaSuccess) env.runtime_version = 0;

  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    // The static runtime keeps this error sticky for the query; clear it so a
    // later caller does not see it as its own.
    cudaGetLastError();
    env.message = std::string("no CUDA device: ") +
                  (status != cudaSuccess ? cudaGetErrorString(status) : "device count is 0");
    // Without any driver the runtime's wording ("driver version is
    // insufficient") suggests an upgrade; say plainly that there is none.
    if (env.driver_version == 0) env.message += " (no NVIDIA driver is loaded)";
    return env;
  }
  env.driver_ok = true;
  for (int i = 0; i < count; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
      gpu.name = prop.name;
      gpu.cc_major = prop.major;
      gpu.cc_minor = prop.minor;
      gpu.memory_bytes = prop.totalGlobalMem;
      gpu.sm_count = prop.multiProcessorCount;
      gpu.l2_bytes = prop.l2CacheSize;
      gpu.memory_bus_bits = prop.memoryBusWidth;
    } else {
      gpu.name = "(properties unavailable)";
    }
    gpu.clock_khz = attribute(cudaDevAttrClockRate, i);
    gpu.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, i);
    std::array<char, 32> bus{};
    if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), i) == cudaSuccess) {
      gpu.pci_bus_id = bus.data();
    }
    env.gpus.push_back(std::move(gpu));
  }
  env.message = "ok: " + std::to_string(count) + " device(s)";
  return env;
}

}  // namespace gi::fitness
