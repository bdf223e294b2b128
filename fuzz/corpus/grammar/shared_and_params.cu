__constant__ int c_table[16];
__global__ void k(const int* in, int* out, const int width, float scale) {
  __shared__ float tile[32][33];
  const unsigned tid = threadIdx.x;
  int v = in[tid], w = 2;
  tile[tid][0] = v * scale;
  __syncthreads();
  if (tid < width) { out[tid] = tile[0][tid] + c_table[tid & 15] + w; }
}
