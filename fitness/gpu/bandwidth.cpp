#include "fitness/gpu/bandwidth.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/gpu/cuda_error.hpp"
#include "fitness/gpu/cuda_timer.hpp"
#include "fitness/timing/timing_statistics.hpp"

namespace gi::fitness {

namespace {

// Frees what it holds even when a CUDA call in between throws.
struct DeviceAllocation {
  void* p = nullptr;
  ~DeviceAllocation() {
    if (p) cudaFree(p);
  }
};

struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
};

}  // namespace

double measure_copy_bandwidth(int device, const CopyBandwidthConfig& config) {
  if (config.bytes == 0 || config.samples < 1 || config.warmup < 0)
    throw std::invalid_argument("copy bandwidth: needs bytes > 0, samples >= 1, warmup >= 0");
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  if (probe != cudaSuccess || device < 0 || device >= count) {
    cudaGetLastError();
    throw CudaError("cudaGetDeviceCount", probe,
                    "no CUDA device: " + (probe != cudaSuccess
                                              ? describe_runtime_error("cudaGetDeviceCount", probe)
                                              : "device " + std::to_string(device) + " requested, " +
                                                    std::to_string(count) + " present"));
  }
  check_runtime(cudaSetDevice(device), "cudaSetDevice");
  DeviceAllocation from, to;
  check_runtime(cudaMalloc(&from.p, config.bytes), "cudaMalloc (copy bandwidth source)");
  check_runtime(cudaMalloc(&to.p, config.bytes), "cudaMalloc (copy bandwidth target)");
  Stream stream;
  check_runtime(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking), "cudaStreamCreate");
  // Touch the source once: a first copy from never-written pages is no
  // slower on a GPU, but the warm-up below should see real data.
  check_runtime(cudaMemsetAsync(from.p, 0x3c, config.bytes, stream.s), "cudaMemsetAsync");
  auto copy = [&] {
    check_runtime(cudaMemcpyAsync(to.p, from.p, config.bytes, cudaMemcpyDeviceToDevice, stream.s),
                  "cudaMemcpyAsync (device to device)");
  };
  for (int i = 0; i < config.warmup; ++i) copy();
  check_runtime(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize");
  CudaTimer timer;
  std::vector<double> ms;
  for (int i = 0; i < config.samples; ++i) {
    timer.start(stream.s);
    copy();
    timer.stop(stream.s);
    check_runtime(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize");
    ms.push_back(timer.elapsed_ms());
  }
  const double t = median(ms);
  if (!(t > 0)) throw std::runtime_error("copy bandwidth: a copy of " + std::to_string(config.bytes) +
                                         " bytes timed at " + std::to_string(t) + " ms");
  return 2.0 * static_cast<double>(config.bytes) / (t * 1e-3);
}

}  // namespace gi::fitness
