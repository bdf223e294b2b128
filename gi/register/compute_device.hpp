#pragma once
// Where the registration's kernels run: a GPU (gi/register/gpu_device.cpp)
// or, for tests only, the CPU emulator (gi/register/emulated_device.cpp),
// which runs the same kernel sources on the CPU. The registration sees
// arrays and named launches; a launch takes its parameters, counts and
// geometry from the seed's spec.json, evaluated with the caller's variables,
// exactly as gi's fitness runs do.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fitness/workload/expression.hpp"
#include "fitness/workload/launch_plan.hpp"
#include "gi/register/kernel_set.hpp"

namespace gi::reg {

// An array in the device's memory: an opaque handle and its size.
struct DeviceArray {
  std::uint64_t handle = 0;
  std::size_t bytes = 0;
};

struct KernelArgs {
  std::map<std::string, DeviceArray> buffers;  // by the spec's parameter name
  fitness::Variables variables;                // read by the spec's counts, scalar values and launch geometry
};

// Time spent in one kernel over a run.
struct KernelTime {
  std::size_t launches = 0;
  double milliseconds = 0;  // GPU: CUDA events around each launch; emulator: wall clock
};

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual std::string name() const = 0;
  virtual DeviceArray allocate(std::size_t bytes) = 0;
  virtual void release(DeviceArray array) = 0;
  virtual void upload(const DeviceArray& array, const void* data, std::size_t bytes) = 0;
  // Waits for the launches queued before it.
  virtual void download(const DeviceArray& array, void* data, std::size_t bytes) = 0;
  virtual void copy(const DeviceArray& destination, const DeviceArray& source) = 0;
  virtual void fill_zero(const DeviceArray& array) = 0;
  // Loads (GPU) or builds (emulator) a kernel before its first launch.
  virtual void prepare(const RegistrationKernel& kernel) = 0;
  // Queues one launch. Throws std::runtime_error naming the kernel when an
  // argument is missing, an array is smaller than the spec's count, or the
  // launch fails.
  virtual void launch(const RegistrationKernel& kernel, const KernelArgs& args) = 0;
  virtual void synchronize() = 0;
  // Per kernel name, the launches so far (after synchronize()).
  virtual std::map<std::string, KernelTime> kernel_times() = 0;
};

// A launch resolved against the spec: parameter order, scalar bytes,
// geometry, and the array of every buffer parameter (plan.buffers order;
// their `initial` bytes are left empty).
struct ResolvedLaunch {
  fitness::LaunchPlan plan;
  std::vector<DeviceArray> arrays;
};
ResolvedLaunch resolve_launch(const RegistrationKernel& kernel, const KernelArgs& args);

// An array that frees itself; typed transfers.
class Buffer {
 public:
  Buffer() = default;
  Buffer(ComputeDevice& device, std::size_t bytes) : device_(&device), array_(device.allocate(bytes)) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept : device_(other.device_), array_(other.array_) { other.device_ = nullptr; }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      array_ = other.array_;
      other.device_ = nullptr;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const DeviceArray& array() const { return array_; }
  std::size_t bytes() const { return array_.bytes; }
  template <class T>
  void upload(const std::vector<T>& values) const {
    device_->upload(array_, values.data(), values.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> values(array_.bytes / sizeof(T));
    device_->download(array_, values.data(), values.size() * sizeof(T));
    return values;
  }
  void zero() const { device_->fill_zero(array_); }
  void copy_from(const Buffer& source) const { device_->copy(array_, source.array_); }

 private:
  void reset() {
    if (device_ != nullptr) device_->release(array_);
    device_ = nullptr;
  }
  ComputeDevice* device_ = nullptr;
  DeviceArray array_;
};

}  // namespace gi::reg
