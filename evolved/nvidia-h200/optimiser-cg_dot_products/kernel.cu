// The two sums of the Polak-Ribiere coefficient, one thread per control point.
//
// conjugateG holds g = -(previous gradient), gradient the new gradient
// (x, y, z; w not read). Every control point adds its terms to the two
// sums with float atomics:
//   sums[0] += g . g
//   sums[1] += (gradient + g) . gradient
// so gamma = sums[1] / sums[0] afterwards. sums must hold zeros before the
// launch; the order of the additions is not fixed, so the last bits of the
// sums vary from run to run.

#define DOT_ITEMS 4  // switch: control points per thread of the block-reduction path(s) (their grid is ceil_div(N, B * DOT_ITEMS)); 1 for the plain kernel
extern "C" __global__ void cg_dot_products(const float4* gradient, const float4* conjugateG, int controlPointNumber, float* sums) {
    int tid;
    float4 gradientValue;
    float4 gValue;
    float gg;
    float dgg;
    // Each thread sums the terms of the control points it reads grid-stride
    // (about DOT_ITEMS of them; the loop is correct for any grid), both sums
    // at once. Shuffles reduce each warp's two sums, the warps' sums meet in
    // shared memory, the first warp reduces them and one thread adds the
    // block's two sums to sums[0] and sums[1]: two atomicAdds per block
    // instead of two per control point.
    __shared__ float warpSums[64];
    float ggSum;
    float dggSum;
    int lane;
    int warp;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    lane = threadIdx.x & 31;
    warp = threadIdx.x >> 5;
    ggSum = 0.0f;
    dggSum = 0.0f;
    for (int i = tid; i < controlPointNumber; i += gridDim.x * blockDim.x) {
        gradientValue = gradient[i];
        gValue = conjugateG[i];
        gg = gValue.x * gValue.x + gValue.y * gValue.y + gValue.z * gValue.z;
        dgg = (gradientValue.x + gValue.x) * gradientValue.x + (gradientValue.y + gValue.y) * gradientValue.y + (gradientValue.z + gValue.z) * gradientValue.z;
        ggSum += gg;
        dggSum += dgg;
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        ggSum += __shfl_down_sync(0xffffffffu, ggSum, offset);
        dggSum += __shfl_down_sync(0xffffffffu, dggSum, offset);
    }
    if (lane == 0) {
        warpSums[warp] = ggSum;
        warpSums[32 + warp] = dggSum;
    }
    __syncthreads();
    if (warp == 0) {
        ggSum = 0.0f;
        dggSum = 0.0f;
        for (int w = lane; w < (int)(blockDim.x >> 5); w += 32) {
            ggSum += warpSums[w];
            dggSum += warpSums[32 + w];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            ggSum += __shfl_down_sync(0xffffffffu, ggSum, offset);
            dggSum += __shfl_down_sync(0xffffffffu, dggSum, offset);
        }
        if (lane == 0) {
            atomicAdd(&sums[0], ggSum);
            atomicAdd(&sums[1], dggSum);
        }
    }
}
