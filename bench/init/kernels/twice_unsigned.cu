__global__ void twice(unsigned* out, const unsigned* in, const uint2* pairs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2u + pairs[i].y;
}
