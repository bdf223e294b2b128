#include "fitness/gpu/l2_flush.hpp"

#include <algorithm>

#include "fitness/gpu/cuda_error.hpp"

namespace gi::fitness {

L2Flush::L2Flush(int device) {
  int l2_bytes = 0;
  check_runtime(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device),
                "cudaDeviceGetAttribute(L2CacheSize)");
  // Twice the size: with a hashed, partitioned L2 one pass of L2 size may
  // leave lines of the previous launch behind. 8 MiB at least.
  bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(l2_bytes), 8u << 20);
  check_runtime(cudaMalloc(&buffer_, bytes_), "cudaMalloc(L2 flush buffer)");
}

L2Flush::~L2Flush() { cudaFree(buffer_); }

void L2Flush::flush(cudaStream_t stream) {
  check_runtime(cudaMemsetAsync(buffer_, 0, bytes_, stream), "cudaMemsetAsync(L2 flush)");
}

}  // namespace gi::fitness
