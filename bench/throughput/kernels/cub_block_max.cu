// A block maximum with CUB's BlockReduce (a fixed block of 256 threads), the
// kind of toolkit include a user's kernel brings.
#include <cub/block/block_reduce.cuh>

struct Larger {
    __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};

extern "C" __global__ void cub_block_max(const float* x, float* block_max, int n) {
    typedef cub::BlockReduce<float, 256> Reduce;
    __shared__ typename Reduce::TempStorage storage;
    int i = blockIdx.x * 256 + threadIdx.x;
    float v = -3.0e38f;
    if (i < n) {
        v = fabsf(x[i]);
    }
    float m = Reduce(storage).Reduce(v, Larger());
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = m;
    }
}
