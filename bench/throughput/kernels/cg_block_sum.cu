// A sum with the toolkit's cooperative groups (the include an aggregate donor
// variant adds): each warp reduces its values, one atomic per warp.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

extern "C" __global__ void cg_block_sum(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < n) {
        v = x[i] * x[i];
    }
    v = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), v, cooperative_groups::plus<float>());
    if (threadIdx.x % 32 == 0) {
        atomicAdd(total, v);
    }
}
