#pragma once
// The device's memory bandwidth as a kernel can use it, for the memory
// floor of a kernel (the least time it can take: bytes it must move over this
// bandwidth). Measured, not taken from the data sheet: a device-to-device
// copy, counting the bytes read and the bytes written.
#include <cstddef>

namespace gi::fitness {

struct CopyBandwidthConfig {
  std::size_t bytes = std::size_t{1} << 30;  // per copy: far beyond any L2
  int warmup = 3;
  int samples = 15;
};

// Bytes per second (read + written) of the median copy. Throws CudaError
// ("no CUDA device: ..." when there is none, or naming the call that failed).
double measure_copy_bandwidth(int device, const CopyBandwidthConfig& config = {});

}  // namespace gi::fitness
