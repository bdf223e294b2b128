// Sum of a float array (e.g. the per-voxel terms of the SSD before the
// similarity value is formed).
//
// One thread per value: each value is added to sum[0] with a global float
// atomicAdd. sum[0] must hold 0.0f before the launch (the caller supplies it;
// the workload does). Float addition is not associative and the order of the
// atomics changes from run to run, so the result varies in its last bits
// between runs (see the spec's tolerance note).

#define SUM_ITEMS 8  // switch: values per thread of the block-reduction path(s) (their grid is ceil_div(N, B * SUM_ITEMS)); 1 for the plain kernel
extern "C" __global__ void sum_reduction(const float* values, int valueNumber, float* sum) {
    int tid;
    float value;
    // The reduction sequence: each thread first adds SUM_ITEMS values of its
    // block's tile (coalesced: consecutive threads read consecutive values,
    // the SUM_ITEMS loads independent, so they are in flight together); tiles
    // are taken grid-stride, so any grid covers every value. The block then
    // halves its partial sums in shared memory with sequential addressing
    // (no bank conflicts, no divergent warps until the last 32), the last
    // warp finishes with shuffles, and thread 0 adds the block's sum to
    // sum[0] with one atomicAdd. Block sizes are powers of two from 64.
    __shared__ float partial[1024];
    int tile;
    int index;
    tid = threadIdx.x;
    tile = blockDim.x * SUM_ITEMS;
    value = 0.0f;
    for (int base = blockIdx.x * tile; base < valueNumber; base += gridDim.x * tile) {
        for (int k = 0; k < SUM_ITEMS; k++) {
            index = base + k * blockDim.x + tid;
            if (index < valueNumber) {
                value += values[index];
            }
        }
    }
    partial[tid] = value;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        value = partial[tid] + partial[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1) {
            value += __shfl_down_sync(0xffffffffu, value, offset);
        }
        if (tid == 0) {
            atomicAdd(sum, value);
        }
    }
}
