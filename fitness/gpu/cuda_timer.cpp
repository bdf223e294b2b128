#include "fitness/gpu/cuda_timer.hpp"

#include "fitness/gpu/cuda_error.hpp"

namespace gi::fitness {

CudaTimer::CudaTimer() {
  check_runtime(cudaEventCreate(&start_), "cudaEventCreate");
  const cudaError_t status = cudaEventCreate(&stop_);
  if (status != cudaSuccess) {
    cudaEventDestroy(start_);
    check_runtime(status, "cudaEventCreate");
  }
}

CudaTimer::~CudaTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void CudaTimer::start(cudaStream_t stream) {
  check_runtime(cudaEventRecord(start_, stream), "cudaEventRecord(start)");
}

void CudaTimer::stop(cudaStream_t stream) {
  check_runtime(cudaEventRecord(stop_, stream), "cudaEventRecord(stop)");
}

double CudaTimer::elapsed_ms() const {
  float ms = 0;
  check_runtime(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms;
}

}  // namespace gi::fitness
