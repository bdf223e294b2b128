#include <cooperative_groups.h>  // gi aggregate: the toolkit's reduce
#include <cooperative_groups/reduce.h>
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
    int gi_sum_107 = 0x7fffffff;
    int gi_sum_108 = (-0x7fffffff - 1);
    unsigned int gi_sum_110 = 0u;
    unsigned int gi_sum_111 = 0xffffffffu;
    int tid;
    float value;
    const int gi_first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;  // gi coarsen: this thread's first item
    float gi_vec_image[8];  // gi coarsen: 'image' read as float4
    if (gi_first + 8 <= (voxelNumber) && ((unsigned long long)(image + gi_first) & 15ull) == 0ull) {
        #pragma unroll
        for (int gi_v = 0; gi_v < 8; gi_v += 4) {
            const float4 gi_w = *reinterpret_cast<const float4*>(image + gi_first + gi_v);
            gi_vec_image[gi_v] = gi_w.x; gi_vec_image[gi_v + 1] = gi_w.y; gi_vec_image[gi_v + 2] = gi_w.z; gi_vec_image[gi_v + 3] = gi_w.w;
        }
    } else {
        for (int gi_v = 0; gi_v < 8; gi_v++)
            if (gi_first + gi_v < (voxelNumber)) gi_vec_image[gi_v] = image[gi_first + gi_v];
    }
    #pragma unroll
    for (int gi_item = 0; gi_item < 8; gi_item++) {
        tid = (blockIdx.x * blockDim.x + threadIdx.x) * 8 + gi_item;
        if (tid < voxelNumber) {
            value = gi_vec_image[gi_item];
            if (__float_as_int(value) >= 0) {
                { const int gi_value = (int)(__float_as_int(value)); if (gi_value < gi_sum_107) gi_sum_107 = gi_value; }
                { const int gi_value = (int)(__float_as_int(value)); if (gi_value > gi_sum_108) gi_sum_108 = gi_value; }
            } else {
                { const unsigned int gi_value = (unsigned int)(__float_as_uint(value)); if (gi_value > gi_sum_110) gi_sum_110 = gi_value; }
                { const unsigned int gi_value = (unsigned int)(__float_as_uint(value)); if (gi_value < gi_sum_111) gi_sum_111 = gi_value; }
            }
        }
    }
    {  // gi aggregate: each thread's values combined in its warp (and block) before the atomics
        const unsigned gi_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        const unsigned gi_threads = blockDim.x * blockDim.y * blockDim.z;
        const unsigned gi_lane = gi_tid & 31u;
        const unsigned gi_width = gi_threads - (gi_tid & ~31u) < 32u ? gi_threads - (gi_tid & ~31u) : 32u;
        const unsigned gi_mask = gi_width == 32u ? 0xffffffffu : (1u << gi_width) - 1u;
        // gi aggregate: one atomicMin per block for all its threads' values
        __shared__ int gi_sum_107_warps[32];
        gi_sum_107 = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum_107, cooperative_groups::less<int>());
        if (gi_lane == 0u) gi_sum_107_warps[gi_tid >> 5] = gi_sum_107;
        // gi aggregate: one atomicMax per block for all its threads' values
        __shared__ int gi_sum_108_warps[32];
        gi_sum_108 = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum_108, cooperative_groups::greater<int>());
        if (gi_lane == 0u) gi_sum_108_warps[gi_tid >> 5] = gi_sum_108;
        // gi aggregate: one atomicMax per block for all its threads' values
        __shared__ unsigned int gi_sum_110_warps[32];
        gi_sum_110 = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum_110, cooperative_groups::greater<unsigned int>());
        if (gi_lane == 0u) gi_sum_110_warps[gi_tid >> 5] = gi_sum_110;
        // gi aggregate: one atomicMin per block for all its threads' values
        __shared__ unsigned int gi_sum_111_warps[32];
        gi_sum_111 = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum_111, cooperative_groups::less<unsigned int>());
        if (gi_lane == 0u) gi_sum_111_warps[gi_tid >> 5] = gi_sum_111;
        __syncthreads();  // gi aggregate: the warps' results of the block sites
        if (gi_tid < 32u) {
            int gi_sum = gi_tid < (gi_threads + 31u) / 32u ? gi_sum_107_warps[gi_tid] : 0x7fffffff;
            gi_sum = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum, cooperative_groups::less<int>());
            if (gi_tid == 0u && gi_sum != 0x7fffffff) atomicMin((int *) & minMax[0], gi_sum);
        }
        if (gi_tid < 32u) {
            int gi_sum = gi_tid < (gi_threads + 31u) / 32u ? gi_sum_108_warps[gi_tid] : (-0x7fffffff - 1);
            gi_sum = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum, cooperative_groups::greater<int>());
            if (gi_tid == 0u && gi_sum != (-0x7fffffff - 1)) atomicMax((int *) & minMax[1], gi_sum);
        }
        if (gi_tid < 32u) {
            unsigned int gi_sum = gi_tid < (gi_threads + 31u) / 32u ? gi_sum_110_warps[gi_tid] : 0u;
            gi_sum = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum, cooperative_groups::greater<unsigned int>());
            if (gi_tid == 0u && gi_sum != 0u) atomicMax((unsigned int *) & minMax[0], gi_sum);
        }
        if (gi_tid < 32u) {
            unsigned int gi_sum = gi_tid < (gi_threads + 31u) / 32u ? gi_sum_111_warps[gi_tid] : 0xffffffffu;
            gi_sum = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), gi_sum, cooperative_groups::less<unsigned int>());
            if (gi_tid == 0u && gi_sum != 0xffffffffu) atomicMin((unsigned int *) & minMax[1], gi_sum);
        }
    }
}
