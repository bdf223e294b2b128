#pragma once
// The registration's kernels on one CUDA GPU: arrays in device memory,
// modules loaded from the kernel set's cubins, launches queued on one
// stream, each between two CUDA events so every kernel's share of the run
// can be reported. Event times are read lazily (at the next download or
// synchronize), so timing adds no wait between launches.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gi/register/compute_device.hpp"

namespace gi::reg {

class GpuDevice : public ComputeDevice {
 public:
  // Throws fitness::CudaError ("no CUDA device: ...") when `device` is not usable.
  explicit GpuDevice(int device);
  ~GpuDevice() override;

  std::string name() const override { return name_; }
  const std::string& arch() const { return arch_; }
  DeviceArray allocate(std::size_t bytes) override;
  void release(DeviceArray array) override;
  void upload(const DeviceArray& array, const void* data, std::size_t bytes) override;
  void download(const DeviceArray& array, void* data, std::size_t bytes) override;
  void copy(const DeviceArray& destination, const DeviceArray& source) override;
  void fill_zero(const DeviceArray& array) override;
  void prepare(const RegistrationKernel& kernel) override;
  void launch(const RegistrationKernel& kernel, const KernelArgs& args) override;
  void synchronize() override;
  std::map<std::string, KernelTime> kernel_times() override;

 private:
  struct Module {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
  };
  struct PendingTime {
    std::string kernel;
    cudaEvent_t start = nullptr, end = nullptr;
  };
  cudaEvent_t take_event();
  void collect_times();  // after the stream is idle

  int device_ = 0;
  std::string name_, arch_;
  cudaStream_t stream_ = nullptr;
  std::map<std::string, Module> modules_;
  std::vector<PendingTime> pending_;
  std::vector<cudaEvent_t> free_events_;
  std::map<std::string, KernelTime> times_;
};

}  // namespace gi::reg
