#pragma once
// The registration's kernels on the CPU emulator (fitness/emulation): the
// same kernel sources, run on host arrays. For tests only (small images):
// it lets the registration's host logic be tested end to end on a machine
// without a GPU. Times are wall-clock and say nothing about a GPU.
#include <map>
#include <string>
#include <vector>

#include "fitness/emulation/cpu_emulator.hpp"
#include "gi/register/compute_device.hpp"

namespace gi::reg {

class EmulatedDevice : public ComputeDevice {
 public:
  explicit EmulatedDevice(fitness::EmulatorOptions options = {});

  std::string name() const override { return fitness::kEmulatorDeviceName; }
  DeviceArray allocate(std::size_t bytes) override;
  void release(DeviceArray array) override;
  void upload(const DeviceArray& array, const void* data, std::size_t bytes) override;
  void download(const DeviceArray& array, void* data, std::size_t bytes) override;
  void copy(const DeviceArray& destination, const DeviceArray& source) override;
  void fill_zero(const DeviceArray& array) override;
  void prepare(const RegistrationKernel& kernel) override;
  void launch(const RegistrationKernel& kernel, const KernelArgs& args) override;
  void synchronize() override {}
  std::map<std::string, KernelTime> kernel_times() override { return times_; }

 private:
  std::vector<std::byte>& memory(const DeviceArray& array);

  fitness::CpuEmulator emulator_;
  std::map<std::uint64_t, std::vector<std::byte>> arrays_;
  std::uint64_t next_handle_ = 1;
  std::map<std::string, fitness::EmulatedKernel> kernels_;
  std::map<std::string, KernelTime> times_;
};

}  // namespace gi::reg
