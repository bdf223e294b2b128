#pragma once
// The GPU memory of one LaunchPlan: every buffer sits between two guard
// regions filled with a known pattern, so a write just outside a buffer is
// caught; inputs are uploaded once and compared bit for bit after a run;
// outputs are set to a NaN fill before every checked run.
// The guard words and how damage is reported: fitness/check/buffer_guards.hpp.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fitness/check/buffer_guards.hpp"
#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

class DeviceCheck;

class DeviceBuffers {
 public:
  // Allocates every buffer of `plan` with its guards and uploads In and InOut
  // contents. Throws std::invalid_argument when an input's bytes do not match
  // its count and type, CudaError when CUDA fails. Synchronous.
  DeviceBuffers(const LaunchPlan& plan, cudaStream_t stream);
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;

  std::size_t size() const { return buffers_.size(); }
  // Device address of buffer `index` (plan order), the first data byte.
  CUdeviceptr data(std::size_t index) const { return buffers_.at(index).data; }
  // What the kernel is passed for buffer `index`: its address, or for a
  // texture buffer (BufferArg::texture) the texture object over it.
  std::uint64_t argument(std::size_t index) const {
    const Buffer& b = buffers_.at(index);
    return b.texture != 0 ? static_cast<std::uint64_t>(b.texture) : static_cast<std::uint64_t>(b.data);
  }

  // Out buffers: every 4-byte word set to kNanFillWord. InOut buffers: their
  // initial contents restored (from a pristine copy kept on the device).
  // Queued on `stream`.
  void reset_outputs(cudaStream_t stream);
  // InOut buffers only: restored before every timed sample so each sample
  // computes on the same data.
  void restore_inouts(cudaStream_t stream);

  // After a run (stream synchronised): nullopt when every guard still holds
  // its buffer's guard_word, else which buffer, which side and the first
  // changed byte.
  // With `device`, the comparison runs on the GPU and the host reads guards
  // back only to describe a damaged one.
  std::optional<std::string> check_guards(cudaStream_t stream, DeviceCheck* device = nullptr) const;
  // nullopt when every In buffer is bit for bit what `plan` uploaded, else
  // which buffer and the first changed element.
  // With `device`, compared with a pristine copy on the GPU.
  std::optional<std::string> check_inputs(const LaunchPlan& plan, cudaStream_t stream,
                                          DeviceCheck* device = nullptr) const;
  // The data bytes of buffer `index`.
  std::vector<std::byte> download(std::size_t index, cudaStream_t stream) const;

 private:
  struct Buffer {
    std::string name;
    ParamRole role = ParamRole::In;
    std::uint32_t guard = kIntGuardWord;  // guard_word of its element type
    std::size_t bytes = 0;
    std::size_t padded = 0;      // bytes rounded up to a whole word
    bool sub_word = false;       // 8- or 16-bit elements (filled with kSubWordFillByte)
    void* allocation = nullptr;  // guard | data | pad | guard
    CUdeviceptr data = 0;
    void* pristine = nullptr;    // In and InOut: the initial bytes
    cudaTextureObject_t texture = 0;  // a texture over data (or over `array`), for a texture buffer
    cudaArray_t array = nullptr;      // a texture array buffer's copy of data (BufferArg::array)
  };
  void release();

  std::vector<Buffer> buffers_;
};

}  // namespace gi::fitness
