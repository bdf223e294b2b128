// The first pass of a two-pass sum: each block reduces its items in dynamic
// shared memory and writes one partial sum.
__global__ void block_sum(const float* in, float* partial, int n) {
  extern __shared__ float s[];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  s[t] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}
