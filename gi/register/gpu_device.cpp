#include "gi/register/gpu_device.hpp"

#include <stdexcept>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/gpu/cuda_error.hpp"
#include "fitness/gpu/module_load.hpp"

namespace gi::reg {
using fitness::check_runtime;

GpuDevice::GpuDevice(int device) : device_(device) {
  const fitness::OpenedDevice opened = fitness::open_device(device);
  name_ = opened.name;
  arch_ = opened.arch;
  check_runtime(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

GpuDevice::~GpuDevice() {
  cudaStreamSynchronize(stream_);
  for (PendingTime& p : pending_) {
    cudaEventDestroy(p.start);
    cudaEventDestroy(p.end);
  }
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
  for (auto& [name, m] : modules_) fitness::driver_api().module_unload(m.module);
  cudaStreamDestroy(stream_);
}

DeviceArray GpuDevice::allocate(std::size_t bytes) {
  void* pointer = nullptr;
  check_runtime(cudaMalloc(&pointer, bytes == 0 ? 4 : bytes), "cudaMalloc");
  return DeviceArray{reinterpret_cast<std::uint64_t>(pointer), bytes};
}

void GpuDevice::release(DeviceArray array) {
  if (array.handle == 0) return;
  cudaStreamSynchronize(stream_);
  cudaFree(reinterpret_cast<void*>(array.handle));
}

void GpuDevice::upload(const DeviceArray& array, const void* data, std::size_t bytes) {
  if (bytes > array.bytes) throw std::logic_error("upload of " + std::to_string(bytes) + " bytes into a smaller array");
  check_runtime(cudaMemcpyAsync(reinterpret_cast<void*>(array.handle), data, bytes, cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync (upload)");
  check_runtime(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (upload)");
}

void GpuDevice::download(const DeviceArray& array, void* data, std::size_t bytes) {
  if (bytes > array.bytes) throw std::logic_error("download of more bytes than the array holds");
  check_runtime(cudaMemcpyAsync(data, reinterpret_cast<void*>(array.handle), bytes, cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (download)");
  check_runtime(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (a kernel failed before this download)");
  collect_times();
}

void GpuDevice::copy(const DeviceArray& destination, const DeviceArray& source) {
  if (destination.bytes < source.bytes) throw std::logic_error("copy into a smaller array");
  check_runtime(cudaMemcpyAsync(reinterpret_cast<void*>(destination.handle), reinterpret_cast<void*>(source.handle),
                                source.bytes, cudaMemcpyDeviceToDevice, stream_),
                "cudaMemcpyAsync (device to device)");
}

void GpuDevice::fill_zero(const DeviceArray& array) {
  check_runtime(cudaMemsetAsync(reinterpret_cast<void*>(array.handle), 0, array.bytes, stream_), "cudaMemsetAsync");
}

void GpuDevice::prepare(const RegistrationKernel& kernel) {
  if (modules_.count(kernel.name) != 0) return;
  if (kernel.binary.empty()) throw std::logic_error("kernel " + kernel.name + " was not compiled for the GPU");
  const fitness::ModuleLoad loaded = fitness::load_module(kernel.binary, kernel.spec.entry);
  if (!loaded.ok()) throw std::runtime_error("kernel " + kernel.name + ": " + loaded.error);
  modules_.emplace(kernel.name, Module{loaded.module, loaded.function});
}

cudaEvent_t GpuDevice::take_event() {
  if (!free_events_.empty()) {
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  check_runtime(cudaEventCreate(&e), "cudaEventCreate");
  return e;
}

void GpuDevice::launch(const RegistrationKernel& kernel, const KernelArgs& args) {
  prepare(kernel);
  const Module& m = modules_.at(kernel.name);
  const ResolvedLaunch r = resolve_launch(kernel, args);
  const fitness::LaunchPlan& plan = r.plan;
  std::vector<CUdeviceptr> pointers(plan.buffers.size());
  std::vector<void*> params;
  for (const auto& [is_buffer, index] : plan.params) {
    if (is_buffer) {
      pointers[index] = static_cast<CUdeviceptr>(r.arrays[index].handle);
      params.push_back(&pointers[index]);
    } else {
      params.push_back(const_cast<std::byte*>(plan.scalars[index].bytes.data()));
    }
  }
  const fitness::DriverApi& api = fitness::driver_api();
  if (plan.dynamic_shared_bytes > 48 * 1024) {
    const CUresult s = api.func_set_attribute(m.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(plan.dynamic_shared_bytes));
    if (s != CUDA_SUCCESS)
      throw std::runtime_error("kernel " + kernel.name + ": " +
                               fitness::describe_driver_error("cuFuncSetAttribute", s));
  }
  PendingTime t{kernel.name, take_event(), take_event()};
  check_runtime(cudaEventRecord(t.start, stream_), "cudaEventRecord");
  const CUresult status =
      api.launch_kernel(m.function, plan.grid[0], plan.grid[1], plan.grid[2], plan.block[0], plan.block[1],
                        plan.block[2], static_cast<unsigned>(plan.dynamic_shared_bytes), stream_, params.data(), nullptr);
  if (status != CUDA_SUCCESS)
    throw std::runtime_error("kernel " + kernel.name + ": " + fitness::describe_driver_error("cuLaunchKernel", status));
  check_runtime(cudaEventRecord(t.end, stream_), "cudaEventRecord");
  pending_.push_back(t);
}

void GpuDevice::synchronize() {
  check_runtime(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (a kernel failed)");
  collect_times();
}

void GpuDevice::collect_times() {
  for (PendingTime& p : pending_) {
    float ms = 0;
    check_runtime(cudaEventElapsedTime(&ms, p.start, p.end), "cudaEventElapsedTime");
    KernelTime& k = times_[p.kernel];
    ++k.launches;
    k.milliseconds += ms;
    free_events_.push_back(p.start);
    free_events_.push_back(p.end);
  }
  pending_.clear();
}

std::map<std::string, KernelTime> GpuDevice::kernel_times() {
  synchronize();
  return times_;
}

}  // namespace gi::reg
