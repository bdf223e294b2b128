#pragma once
// The memory of one LaunchPlan for the CPU emulator, laid out as the GPU
// runner lays it out (fitness/gpu/device_buffers.hpp): every buffer between two
// guard regions of its guard word (fitness/check/buffer_guards.hpp), inputs copied
// in, outputs set to the NaN fill, InOut buffers to their initial contents.
// The memory is a shared mapping, so a launch run in a child process
// (fitness/emulation/emulated_launch.hpp) leaves its results here.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness::emulation {

// What a kernel run on the CPU gets for a texture over a CUDA array
// (BufferArg::array): a pointer to this, where the GPU passes a
// cudaTextureObject_t. The prelude's gi_texture_array
// (fitness/emulation/cuda_on_cpu.hpp) reads it with the same layout.
struct EmulatedTextureArray {
  const void* data = nullptr;
  unsigned long long extent[3] = {1, 1, 1};
  unsigned dimensions = 0;
  unsigned filter = 0;   // TextureFilter: 0 point, 1 linear
  unsigned address = 0;  // TextureAddress: 0 clamp, 1 border
  unsigned normalized = 0;
};

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
  // What the kernel gets for buffer `index`: its data, or for a texture over
  // a CUDA array the address of its EmulatedTextureArray.
  void* argument(std::size_t index) const;
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
    std::unique_ptr<EmulatedTextureArray> array;  // a texture over a CUDA array
  };
  std::vector<Buffer> buffers_;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
};

}  // namespace gi::fitness::emulation
