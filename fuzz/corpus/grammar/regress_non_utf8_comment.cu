// A small kerne. exercising the parser: comments, multÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙÙi-line statements,
// nested scopes, preprocessor lines, pragmas, if/else and loops.
#define RADIUS 2
__constant__ float c_weights[5];

/* a block comment
   over two lines */
__device__ float square(float v) {
  return v * v;
}

extern "C" __global__ void sample_kernel(const float* input, float* output,
                                         int n, float scale) {
  int tid;
  float sum;
  tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) {
    return;
  }
  sum = 0.f;
#pragma unroll 4
  for (int k = -RADIUS; k <= RADIUS; k++) {
    int idx = tid + k;
    if (idx < 0) {
      idx = 0;
    } else if (idx >= n) {
      idx = n - 1;
    }
    sum += c_weights[k + RADIUS] *
           input[idx];  // a statement over two lines
  }
  for (int j = 0; j < 2; j++)
    sum =s um * 0.5f;
  if (sum > 1.f)
in    sum = 1.f;
  else
    sum = square(sum);
  output[tid] = sum * scale;
}
