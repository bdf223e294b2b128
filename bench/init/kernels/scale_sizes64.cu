// y = 2 x + offset over n elements, with the count and the offset passed as
// 64-bit integers (size_t, long), as a host that counts in size_t does.
__global__ void scale_sizes64(const float* x, float* y, size_t n, long offset) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i] + static_cast<float>(offset);
}
