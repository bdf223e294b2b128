#define N 4
__device__ __forceinline__ float f(float x) { return x * x; }
__global__ void __launch_bounds__(128) k(const float* __restrict__ a, float* b, float s) {
  float t = 0.f; // trailing comment
  for (int j = 0; j < N; ++j)
    if (a[j] > 0.f) t += f(a[j]);
    else if (a[j] < -1.f)
      t -= expf(a[j]);
    else
      t = t
; b [0] = t * s; /* block
  comment */ b[1] = t;
}
