// Maximal length of the vectors of a float4 field (e.g. the node gradient,
// before the conjugate-gradient step normalises it).
//
// One thread per vector: the Euclidean length of (x, y, z) (w is never read)
// is folded into maxLength[0] with an atomic maximum on the float's bits read
// as an int. For non-negative floats the int order is the float order, and
// lengths are never negative, so this is an exact maximum whatever the order
// of the atomics. maxLength[0] must hold 0.0f before the launch (the caller
// supplies it; the workload does).

#define MAXLEN_ITEMS 4  // switch: vectors per thread of the block-reduction path(s) (their grid is ceil_div(N, B * MAXLEN_ITEMS)); 1 for the plain kernel
extern "C" __global__ void max_vector_length(const float4* __restrict__ field, int vectorNumber, float* __restrict__ maxLength) {
    int tid;
    float length;
    float4 vector;
    // Each thread keeps the longest of the vectors it reads grid-stride
    // (about MAXLEN_ITEMS of them; the loop is correct for any grid), as the
    // bits of a non-negative float, whose unsigned order is the float order.
    // A warp takes the maximum of its lanes' with one __reduce_max_sync, the
    // warps' maxima meet in shared memory, the first warp reduces them and
    // one thread folds the block's maximum into maxLength[0] with the seed's
    // atomicMax. Exact whatever the order, as the seed.
    __shared__ unsigned warpMaxima[32];
    unsigned longest;
    int lane;
    int warp;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    lane = threadIdx.x & 31;
    warp = threadIdx.x >> 5;
    longest = 0u;
    for (int i = tid; i < vectorNumber; i += gridDim.x * blockDim.x) {
        vector = __ldg(&field[i]);
        length = sqrtf(vector.x * vector.x + vector.y * vector.y + vector.z * vector.z);
        longest = max(longest, __float_as_uint(length));
    }
    longest = __reduce_max_sync(0xffffffffu, longest);
    if (lane == 0) {
        warpMaxima[warp] = longest;
    }
    __syncthreads();
    if (warp == 0) {
        for (int w = lane; w < (int)(blockDim.x >> 5); w += 32) {
            longest = max(longest, warpMaxima[w]);
        }
        longest = __reduce_max_sync(0xffffffffu, longest);
        if (lane == 0) {
            atomicMax((int*)maxLength, (int)longest);
        }
    }
}
