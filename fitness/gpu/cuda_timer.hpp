#pragma once
// GPU time between two points of a stream, from a pair of CUDA events.
#include <cuda_runtime_api.h>

namespace gi::fitness {

class CudaTimer {
 public:
  CudaTimer();
  ~CudaTimer();
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  void start(cudaStream_t stream);
  void stop(cudaStream_t stream);
  // Milliseconds between start and stop; the stop event must have completed
  // (the caller synchronises the stream first).
  double elapsed_ms() const;

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace gi::fitness
