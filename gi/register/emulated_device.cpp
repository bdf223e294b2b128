#include "gi/register/emulated_device.hpp"

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace gi::reg {

EmulatedDevice::EmulatedDevice(fitness::EmulatorOptions options) : emulator_(std::move(options)) {}

std::vector<std::byte>& EmulatedDevice::memory(const DeviceArray& array) {
  const auto it = arrays_.find(array.handle);
  if (it == arrays_.end()) throw std::logic_error("an array that was never allocated or already released");
  return it->second;
}

DeviceArray EmulatedDevice::allocate(std::size_t bytes) {
  const std::uint64_t handle = next_handle_++;
  arrays_[handle].assign(bytes, std::byte{0});
  return DeviceArray{handle, bytes};
}

void EmulatedDevice::release(DeviceArray array) { arrays_.erase(array.handle); }

void EmulatedDevice::upload(const DeviceArray& array, const void* data, std::size_t bytes) {
  std::vector<std::byte>& m = memory(array);
  if (bytes > m.size()) throw std::logic_error("upload into a smaller array");
  std::memcpy(m.data(), data, bytes);
}

void EmulatedDevice::download(const DeviceArray& array, void* data, std::size_t bytes) {
  const std::vector<std::byte>& m = memory(array);
  if (bytes > m.size()) throw std::logic_error("download of more bytes than the array holds");
  std::memcpy(data, m.data(), bytes);
}

void EmulatedDevice::copy(const DeviceArray& destination, const DeviceArray& source) {
  const std::vector<std::byte>& s = memory(source);
  std::vector<std::byte>& d = memory(destination);
  if (d.size() < s.size()) throw std::logic_error("copy into a smaller array");
  std::memmove(d.data(), s.data(), s.size());  // an array copied onto itself is left as it is
}

void EmulatedDevice::fill_zero(const DeviceArray& array) {
  std::vector<std::byte>& m = memory(array);
  std::fill(m.begin(), m.end(), std::byte{0});
}

void EmulatedDevice::prepare(const RegistrationKernel& kernel) {
  if (kernels_.count(kernel.name) != 0) return;
  fitness::EmulatedKernel built = emulator_.load(kernel.compile_source, kernel.spec.entry);
  if (!built.ok()) throw std::runtime_error("kernel " + kernel.name + " does not build for the CPU emulator: " + built.error);
  kernels_.emplace(kernel.name, std::move(built));
}

void EmulatedDevice::launch(const RegistrationKernel& kernel, const KernelArgs& args) {
  prepare(kernel);
  ResolvedLaunch r = resolve_launch(kernel, args);
  // The emulator runs a plan on copies of its buffers: every array goes in,
  // out and in-out arrays come back. An out array goes in too because, as on
  // a GPU, it keeps what the kernel does not write (a masked level writes
  // only the mask's voxels); the emulator's NaN start is for evolution's checks.
  for (std::size_t i = 0; i < r.plan.buffers.size(); ++i) {
    fitness::BufferArg& b = r.plan.buffers[i];
    if (b.role == fitness::ParamRole::Out) b.role = fitness::ParamRole::InOut;
    const std::vector<std::byte>& m = memory(r.arrays[i]);
    b.initial.assign(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(b.count * fitness::element_bytes(b.type)));
  }
  const auto start = std::chrono::steady_clock::now();
  const fitness::EmulatedRun run = emulator_.run(kernels_.at(kernel.name), r.plan);
  KernelTime& t = times_[kernel.name];
  ++t.launches;
  t.milliseconds += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (run.status != fitness::RunStatus::Ok)
    throw std::runtime_error("kernel " + kernel.name + " failed in the CPU emulator: " + fitness::to_string(run.status) +
                             ": " + run.message);
  for (std::size_t i = 0; i < r.plan.buffers.size(); ++i) {
    if (r.plan.buffers[i].role == fitness::ParamRole::In) continue;
    std::vector<std::byte>& m = memory(r.arrays[i]);
    std::memcpy(m.data(), run.buffers[i].data(), run.buffers[i].size());
  }
}

}  // namespace gi::reg
