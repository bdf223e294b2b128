#pragma once
// Empties the L2 cache before a timed launch, so that every candidate starts
// from the same cold cache: a memset of a buffer twice the L2 size evicts
// whatever the previous launch left there.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace gi::fitness {

class L2Flush {
 public:
  explicit L2Flush(int device);  // reads the L2 size off the device
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  void flush(cudaStream_t stream);
  std::size_t buffer_bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gi::fitness
