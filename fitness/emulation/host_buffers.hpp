#pragma once
// The memory of one LaunchPlan for the CPU emulator, laid out as the GPU
// runner lays it out (fitness/gpu/device_buffers.hpp): every buffer between two
// guard regions of its guard word (fitness/check/buffer_guards.hpp), inputs copied
// in, outputs set to the NaN fill, InOut buffers to their initial contents.
// The memory is a shared mapping, so a launch run in a child process
// (fitness/emulation/emulated_launch.hpp) leaves its results here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness::emulation {

class HostBuffers {
 public:
  // Throws std::invalid_argument when an input's bytes do not match its
  // count and type (as DeviceBuffers does), std::runtime_error when the
  // memory cannot be mapped.
  explicit HostBuffers(const LaunchPlan& plan);
  ~HostBuffers();
  HostBuffers(const HostBuffers&) = delete;
  HostBuffers& operator=(const HostBuffers&) = delete;

  std::size_t size() const { return buffers_.size(); }
  std::byte* data(std::size_t index) const { return buffers_.at(index).data; }
  std::span<const std::byte> bytes(std::size_t index) const;

  // nullopt when every guard is intact, else which buffer, side and byte.
  std::optional<std::string> check_guards() const;
  // nullopt when every In buffer is bit for bit the plan's input.
  std::optional<std::string> check_inputs(const LaunchPlan& plan) const;
  // Where `address` lies relative to the buffers: "12 bytes after the end of
  // buffer 'out' (in its guard region)", or nullopt when near none.
  std::optional<std::string> locate(std::uintptr_t address) const;

 private:
  struct Buffer {
    std::string name;
    ParamRole role = ParamRole::In;
    std::uint32_t guard = 0;
    std::size_t bytes = 0;
    std::byte* data = nullptr;
  };
  std::vector<Buffer> buffers_;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
};

}  // namespace gi::fitness::emulation
