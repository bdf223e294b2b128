// A one-block sum: a block-stride loop, then a tree in a static shared array
// sized for the block size the author launches (256). Written for gi
// (11-29): `red[tid + s]` under `tid < s`, s from B/2 down, stays below B,
// so blocks of 256 fit the array.
#define THREADS 256

__global__ void tree_sum(const float* x, int n, float* total) {
  __shared__ float red[THREADS];
  const unsigned tid = threadIdx.x;
  float s = 0.f;
  for (int k = tid; k < n; k += blockDim.x) s += x[k];
  red[tid] = s;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  if (tid == 0) total[0] = red[0];
}
