// Minimum and maximum intensity of an image (e.g. before rescaling it for the
// joint histogram).
//
// One thread per voxel. Each intensity is folded into minMax[0] (minimum) and
// minMax[1] (maximum) with integer atomics on the float's bits, which order
// floats exactly when the sign is taken into account: for a non-negative
// float (sign bit clear) the int order is the float order, so atomicMin /
// atomicMax on ints apply; for a negative float (sign bit set) the unsigned
// order is the reverse of the float order, so the roles swap: atomicMax on
// unsigned for the minimum, atomicMin on unsigned for the maximum. A stored
// non-negative value (unsigned below 0x80000000) always wins against a
// negative one in those unsigned comparisons, and vice versa for the signed
// ones, so mixed signs are handled. The result is exact and independent of
// the order of the atomics. minMax must hold (+inf, -inf) before the launch
// (the caller supplies it; the workload does).

extern "C" __global__ void intensity_minmax(const float* image, int voxelNumber, float* minMax) {
    int tid;
    float value;
    // Each thread keeps the least and greatest of the intensities it reads
    // (grid-stride float4 loads, the buffer start being 16-byte aligned; the
    // last voxelNumber % 4 one by one; correct for any grid) as unsigned keys
    // in float order: a non-negative float's bits with the sign bit set, a
    // negative float's bits inverted (so -0 sorts below +0, as the seed's
    // atomics order them; no float comparison, so denormals stay exact).
    // A warp reduces its keys with __reduce_min_sync and __reduce_max_sync,
    // the warps' keys meet in shared memory, the first warp reduces them and
    // one thread folds the block's minimum and maximum into minMax with the
    // seed's sign-dependent atomics: two atomics per block.
    __shared__ unsigned warpKeys[64];
    const float4* quads;
    float4 quad;
    unsigned key;
    unsigned lowest;
    unsigned highest;
    int lane;
    int warp;
    int quadNumber;
    quads = (const float4*)image;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    lane = threadIdx.x & 31;
    warp = threadIdx.x >> 5;
    quadNumber = voxelNumber >> 2;
    lowest = 0xffffffffu;
    highest = 0u;
    for (int i = tid; i < quadNumber; i += gridDim.x * blockDim.x) {
        quad = quads[i];
        key = __float_as_uint(quad.x) ^ ((unsigned)(__float_as_int(quad.x) >> 31) | 0x80000000u);
        lowest = min(lowest, key);
        highest = max(highest, key);
        key = __float_as_uint(quad.y) ^ ((unsigned)(__float_as_int(quad.y) >> 31) | 0x80000000u);
        lowest = min(lowest, key);
        highest = max(highest, key);
        key = __float_as_uint(quad.z) ^ ((unsigned)(__float_as_int(quad.z) >> 31) | 0x80000000u);
        lowest = min(lowest, key);
        highest = max(highest, key);
        key = __float_as_uint(quad.w) ^ ((unsigned)(__float_as_int(quad.w) >> 31) | 0x80000000u);
        lowest = min(lowest, key);
        highest = max(highest, key);
    }
    for (int i = 4 * quadNumber + tid; i < voxelNumber; i += gridDim.x * blockDim.x) {
        key = __float_as_uint(image[i]) ^ ((unsigned)(__float_as_int(image[i]) >> 31) | 0x80000000u);
        lowest = min(lowest, key);
        highest = max(highest, key);
    }
    lowest = __reduce_min_sync(0xffffffffu, lowest);
    highest = __reduce_max_sync(0xffffffffu, highest);
    if (lane == 0) {
        warpKeys[warp] = lowest;
        warpKeys[32 + warp] = highest;
    }
    __syncthreads();
    if (warp == 0) {
        lowest = 0xffffffffu;
        highest = 0u;
        for (int w = lane; w < (int)(blockDim.x >> 5); w += 32) {
            lowest = min(lowest, warpKeys[w]);
            highest = max(highest, warpKeys[32 + w]);
        }
        lowest = __reduce_min_sync(0xffffffffu, lowest);
        highest = __reduce_max_sync(0xffffffffu, highest);
        if (lane == 0) {
            // Back from keys to float bits: a key with the top bit set was a
            // non-negative float, one without a negative float.
            lowest = lowest ^ (((unsigned)((int)lowest >> 31) ^ 0xffffffffu) | 0x80000000u);
            highest = highest ^ (((unsigned)((int)highest >> 31) ^ 0xffffffffu) | 0x80000000u);
            if ((int)lowest >= 0) {
                atomicMin((int*)&minMax[0], (int)lowest);
            } else {
                atomicMax((unsigned int*)&minMax[0], lowest);
            }
            if ((int)highest >= 0) {
                atomicMax((int*)&minMax[1], (int)highest);
            } else {
                atomicMin((unsigned int*)&minMax[1], highest);
            }
        }
    }
}
