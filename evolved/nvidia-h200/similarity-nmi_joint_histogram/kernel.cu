// Joint intensity histogram of the reference and warped images with cubic
// B-spline Parzen windowing, the first step of normalised mutual information.
//
// Each active voxel places its two intensities at bin positions
//     p = intensity * scale + offset
// (the caller chooses scale and offset so the intensities span [1, bins - 2]).
// The cubic B-spline window of p, with u = p - floor(p), touches the four
// bins floor(p) - 1 .. floor(p) + 2 with weights
//     (1 - u)^3 / 6, (3u^3 - 6u^2 + 4) / 6, (-3u^3 + 3u^2 + 3u + 1) / 6, u^3 / 6
// which sum to 1. The voxel adds referenceWeight[a] * warpedWeight[b] to
// each of the 4 x 4 bins (reference bin r, warped bin w) at
//     jointHistogram[r * warpedBinNumber + w]
// with a float atomicAdd; bins outside the histogram are skipped. The
// histogram is accumulated into the caller's contents (zeros for a fresh
// histogram), so its total mass grows by one per active voxel.
//
// activeVoxels[i] is the linear index of active voxel i in both images.

extern "C" __global__ void similarity_nmi_joint_histogram(const float* referenceImage, const float* warpedImage, const int* activeVoxels, int activeVoxelNumber, int referenceBinNumber, int warpedBinNumber, float referenceScale, float referenceOffset, float warpedScale, float warpedOffset, float* jointHistogram) {
    // gi privatise: a copy of jointHistogram per block in shared memory, as many elements as the launch gives it bytes for, counted in fixed point
    extern __shared__ int gi_private[];
    unsigned gi_private_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(gi_private_bytes));
    const unsigned gi_private_size = gi_private_bytes / sizeof(int);
    const unsigned gi_private_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned gi_private_threads = blockDim.x * blockDim.y * blockDim.z;
    for (unsigned gi_i = gi_private_tid; gi_i < gi_private_size; gi_i += gi_private_threads) gi_private[gi_i] = 0;
    // gi privatise: no element of the copy passes the block's items times 0.5 (the spec's accumulation_bound): in units of 2^-gi_shift that stays below 2^30, half an int's range
    const long long gi_grid_threads = (long long)gridDim.x * blockDim.x;
    const float gi_block_bound = (float)((((long long)(activeVoxelNumber) + gi_grid_threads - 1) / gi_grid_threads) * gi_private_threads) * 0.5f;
    const int gi_shift = min(29 - ilogbf(fmaxf(gi_block_bound, 1e-30f)), 100);
    const float gi_scale = ldexpf(1.0f, gi_shift);
    const float gi_unit = ldexpf(1.0f, -gi_shift);
    __syncthreads();
    int tid;
    int index;
    int referencePre;
    int warpedPre;
    int referenceBin;
    int warpedBin;
    float referencePosition;
    float warpedPosition;
    float u;
    float v;
    float referenceWeight[4];
    float warpedWeight[4];
    const int gi_first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;  // gi coarsen: this thread's first item
    int gi_vec_activeVoxels[4];  // gi coarsen: 'activeVoxels' read as int4
    if (gi_first + 4 <= (activeVoxelNumber) && ((unsigned long long)(activeVoxels + gi_first) & 15ull) == 0ull) {
        #pragma unroll
        for (int gi_v = 0; gi_v < 4; gi_v += 4) {
            const int4 gi_w = *reinterpret_cast<const int4*>(activeVoxels + gi_first + gi_v);
            gi_vec_activeVoxels[gi_v] = gi_w.x; gi_vec_activeVoxels[gi_v + 1] = gi_w.y; gi_vec_activeVoxels[gi_v + 2] = gi_w.z; gi_vec_activeVoxels[gi_v + 3] = gi_w.w;
        }
    } else {
        for (int gi_v = 0; gi_v < 4; gi_v++)
            if (gi_first + gi_v < (activeVoxelNumber)) gi_vec_activeVoxels[gi_v] = activeVoxels[gi_first + gi_v];
    }
    #pragma unroll
    for (int gi_item = 0; gi_item < 4; gi_item++) {
        tid = (blockIdx.x * blockDim.x + threadIdx.x) * 4 + gi_item;
        if (tid < activeVoxelNumber) {
            index = gi_vec_activeVoxels[gi_item];
            referencePosition = referenceImage[index] * referenceScale + referenceOffset;
            warpedPosition = warpedImage[index] * warpedScale + warpedOffset;
            referencePre = (int)floorf(referencePosition);
            u = referencePosition - (float)referencePre;
            v = 1.0f - u;
            referenceWeight[0] = v * v * v / 6.0f;
            referenceWeight[1] = (3.0f * u * u * u - 6.0f * u * u + 4.0f) / 6.0f;
            referenceWeight[2] = (-3.0f * u * u * u + 3.0f * u * u + 3.0f * u + 1.0f) / 6.0f;
            referenceWeight[3] = u * u * u / 6.0f;
            warpedPre = (int)floorf(warpedPosition);
            u = warpedPosition - (float)warpedPre;
            v = 1.0f - u;
            warpedWeight[0] = v * v * v / 6.0f;
            warpedWeight[1] = (3.0f * u * u * u - 6.0f * u * u + 4.0f) / 6.0f;
            warpedWeight[2] = (-3.0f * u * u * u + 3.0f * u * u + 3.0f * u + 1.0f) / 6.0f;
            warpedWeight[3] = u * u * u / 6.0f;
            for (int a = 0; a < 4; a++) {
                referenceBin = referencePre - 1 + a;
                for (int b = 0; b < 4; b++) {
                    warpedBin = warpedPre - 1 + b;
                    if (referenceBin >= 0 && referenceBin < referenceBinNumber && warpedBin >= 0 && warpedBin < warpedBinNumber) {
                        {
                            const long long gi_index = referenceBin * warpedBinNumber + warpedBin;
                            if (gi_index >= 0 && gi_index < (long long)gi_private_size) atomicAdd(&gi_private[gi_index], __float2int_rn((referenceWeight[a] * warpedWeight[b]) * gi_scale));
                            else atomicAdd(&jointHistogram[gi_index], referenceWeight[a] * warpedWeight[b]);
                        }
                    }
                }
            }
        }
    }
    __syncthreads();
    // gi privatise: the block's copy added to jointHistogram, one atomicAdd per element it changed
    for (unsigned gi_i = gi_private_tid; gi_i < gi_private_size; gi_i += gi_private_threads) {
        if (gi_private[gi_i] != 0) atomicAdd(&jointHistogram[gi_i], (float)gi_private[gi_i] * gi_unit);
    }
}
