#pragma once
// A one-thread kernel that busy-waits on %globaltimer. Queued in front of the
// start event of a short kernel, it keeps the GPU busy while the host records
// the event and launches the kernel, so launch latency stays out of the
// sample. Compiled once with NVRTC (gi compiles no device code ahead of time).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

namespace gi::fitness {

class SpinKernel {
 public:
  // `arch` as NVRTC takes it, e.g. "sm_90". Throws std::runtime_error when
  // NVRTC fails and CudaError when loading fails.
  explicit SpinKernel(const std::string& arch);
  ~SpinKernel();
  SpinKernel(const SpinKernel&) = delete;
  SpinKernel& operator=(const SpinKernel&) = delete;

  void launch(cudaStream_t stream, double microseconds);

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace gi::fitness
