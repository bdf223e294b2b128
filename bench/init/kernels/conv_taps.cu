#define RADIUS 4
#define TAPS (2 * RADIUS + 1)
__constant__ float c_taps[TAPS];
__global__ void conv_rows(float* out, const float* in, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < w) {
    float s = 0.f;
    for (int k = -RADIUS; k <= RADIUS; ++k) {
      int xx = min(max(x + k, 0), w - 1);
      s += c_taps[k + RADIUS] * in[y * w + xx];
    }
    out[y * w + x] = s;
  }
}
