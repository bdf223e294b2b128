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

extern "C" __global__ void cg_dot_products(const float4* gradient, const float4* conjugateG, int controlPointNumber, float* sums) {
    float gi_sum_77 = 0;
    float gi_sum_78 = 0;
    int tid;
    float4 gradientValue;
    float4 gValue;
    float gg;
    float dgg;
    for (int gi_item = 0; gi_item < 2; gi_item++) {
        tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x;
        if (tid < controlPointNumber) {
            gradientValue = gradient[tid];
            gValue = conjugateG[tid];
            gg = gValue.x * gValue.x + gValue.y * gValue.y + gValue.z * gValue.z;
            dgg = (gradientValue.x + gValue.x) * gradientValue.x + (gradientValue.y + gValue.y) * gradientValue.y + (gradientValue.z + gValue.z) * gradientValue.z;
            gi_sum_77 += (float)(gg);
            gi_sum_78 += (float)(dgg);
        }
    }
    {  // gi aggregate: each thread's values combined in its warp (and block) before the atomics
        const unsigned gi_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        const unsigned gi_threads = blockDim.x * blockDim.y * blockDim.z;
        const unsigned gi_lane = gi_tid & 31u;
        const unsigned gi_width = gi_threads - (gi_tid & ~31u) < 32u ? gi_threads - (gi_tid & ~31u) : 32u;
        const unsigned gi_mask = gi_width == 32u ? 0xffffffffu : (1u << gi_width) - 1u;
        // gi aggregate: one atomicAdd per block for all its threads' values
        __shared__ float gi_sum_77_warps[32];
        for (unsigned gi_step = 16u; gi_step > 0u; gi_step >>= 1) {
            const float gi_other = __shfl_down_sync(gi_mask, gi_sum_77, gi_step);
            if (gi_lane + gi_step < gi_width) { gi_sum_77 += gi_other; }
        }
        if (gi_lane == 0u) gi_sum_77_warps[gi_tid >> 5] = gi_sum_77;
        // gi aggregate: one atomicAdd per block for all its threads' values
        __shared__ float gi_sum_78_warps[32];
        for (unsigned gi_step = 16u; gi_step > 0u; gi_step >>= 1) {
            const float gi_other = __shfl_down_sync(gi_mask, gi_sum_78, gi_step);
            if (gi_lane + gi_step < gi_width) { gi_sum_78 += gi_other; }
        }
        if (gi_lane == 0u) gi_sum_78_warps[gi_tid >> 5] = gi_sum_78;
        __syncthreads();  // gi aggregate: the warps' results of the block sites
        if (gi_tid < 32u) {
            float gi_sum = gi_tid < (gi_threads + 31u) / 32u ? gi_sum_77_warps[gi_tid] : 0;
            for (unsigned gi_step = 16u; gi_step > 0u; gi_step >>= 1) {
                const float gi_other = __shfl_down_sync(gi_mask, gi_sum, gi_step);
                if (gi_lane + gi_step < gi_width) { gi_sum += gi_other; }
            }
            if (gi_tid == 0u && gi_sum != 0) atomicAdd(&sums[0], gi_sum);
        }
        if (gi_tid < 32u) {
            float gi_sum = gi_tid < (gi_threads + 31u) / 32u ? gi_sum_78_warps[gi_tid] : 0;
            for (unsigned gi_step = 16u; gi_step > 0u; gi_step >>= 1) {
                const float gi_other = __shfl_down_sync(gi_mask, gi_sum, gi_step);
                if (gi_lane + gi_step < gi_width) { gi_sum += gi_other; }
            }
            if (gi_tid == 0u && gi_sum != 0) atomicAdd(&sums[1], gi_sum);
        }
    }
}
