#define ADD(a, b) \
  ((a) + (b))
struct P { float x, y; };
typedef unsigned int uint32;
namespace ns {
extern "C" __global__ void k(P* p, uint32 n, double* d) {
  unsigned long long idx = blockIdx.x;
#pragma unroll
  for (uint32 i = 0; i < n; i++) {
    p[i].x = ADD(p[i].y, 1.0f);
  }
  d[idx] = sinf(1.0) + '\n' + "str\"ing"[0];
}
}
