// Block matching by normalised cross-correlation (NCC), one thread per block.
//
// The reference image is split into blocks of 4x4x4 voxels: block (i, j, k)
// covers voxels 4i .. 4i + 3, 4j .. 4j + 3, 4k .. 4k + 3; there are
// blockDimX = ceil(imageDimX / 4) blocks along x (likewise y, z), so the last
// blocks may be cut by the image border. Reference and warped images have the
// same size. The voxels of a block are those inside the image whose mask
// value is non-zero.
//
// A block is used when it has at least minimumVoxelNumber voxels and their
// reference intensities have non-zero variance. For a used block, every
// displacement d in [-searchRadius, searchRadius]^3 (voxels) is tried: it is a
// candidate when v + d lies inside the image for every voxel v of the block
// and the warped intensities at v + d have non-zero variance; its score is
//   NCC = sum (r - mean r)(w - mean w) / sqrt(sum (r - mean r)^2 * sum (w - mean w)^2)
// over the block's voxels (r at v in the reference, w at v + d in the warped
// image), with the means computed first (two passes). The candidate with the
// highest NCC wins; ties go to the first one in the order dz, dy, dx from
// -searchRadius (dx fastest).
//
// Output per block: (dx, dy, dz, NCC) of the best candidate; a block that is
// not used, or has no candidate, gets the marker (0, 0, 0, -2).

extern "C" __global__ void ncc_block_matching(const float* referenceImage, const float* warpedImage, const int* mask, int imageDimX, int imageDimY, int imageDimZ, int blockDimX, int blockDimY, int blockDimZ, int minimumVoxelNumber, int searchRadius, float4* blockResults) {
    int tid;
    int blockNumber;
    int blockX;
    int blockY;
    int blockZ;
    int X;
    int Y;
    int Z;
    int index;
    int warpedIndex;
    int voxelNumber;
    int inside;
    float referenceMean;
    float referenceVariance;
    float referenceValue;
    float warpedMean;
    float warpedVariance;
    float warpedValue;
    float covariance;
    float ncc;
    float4 result;
    // One warp per reference block (B / 32 blocks per CUDA block; the grid
    // is ceil_div(blockNumber * 32, B)). Each warp loads its block's mask and
    // reference intensities (two voxels per lane; the reference only where
    // the mask is set), forms the reference mean and variance with the plain
    // kernel's sums in its voxel order, and, for a used block only, stages
    // the search window of (4 + 2r)^3 warped voxels (0 outside the image) in
    // its part of the dynamic shared memory, slices padded by 3 floats to
    // spread the lanes over the banks. Each lane then scores every 32nd
    // displacement (lane order dx, dz, dy) with exactly the plain kernel's
    // two-pass float arithmetic, both passes reading the window (few
    // registers: every block size fits), and keeps the best as a 64-bit key:
    // order-preserving NCC bits above, the displacement's place in the plain
    // search order (dz, dy, dx) inverted below. The warp maximum of the keys
    // is the plain kernel's choice (highest NCC, the first in its order on
    // ties); a lane with no candidate holds the key of NCC -2 at displacement
    // 0, the plain marker. Blocks with all 64 voxels skip the mask tests.
    extern __shared__ float nccShared[];
    float* centred;
    float* window;
    float4* centredQuads;
    float4 quad;
    float reference4[4];
    float staged[4];
    int target[4];
    float rawValue0;
    float rawValue1;
    unsigned long long maskBits;
    unsigned long long key;
    unsigned long long bestKey;
    unsigned long long otherKey;
    unsigned int scoreBits;
    unsigned int orderBits;
    int lane;
    int warp;
    int edge;
    int slicePitch;
    int windowVolume;
    int regionSize;
    int span;
    int candidateNumber;
    int voxel0;
    int voxel1;
    int flag0;
    int flag1;
    int index0;
    int index1;
    int loX;
    int loY;
    int loZ;
    int hiX;
    int hiY;
    int hiZ;
    int originX;
    int originY;
    int originZ;
    int row;
    int dx;
    int dy;
    int dz;
    int base;
    int order;
    float inverseEdge;
    lane = threadIdx.x & 31;
    warp = threadIdx.x >> 5;
    tid = blockIdx.x * (blockDim.x >> 5) + warp;
    blockNumber = blockDimX * blockDimY * blockDimZ;
    if (tid < blockNumber) {
        edge = 4 + 2 * searchRadius;
        span = 2 * searchRadius + 1;
        candidateNumber = span * span * span;
        slicePitch = edge * edge + 3;
        windowVolume = edge * edge * edge;
        regionSize = (edge * slicePitch + 64 + 3) / 4 * 4;
        centred = nccShared + warp * regionSize;
        window = centred + 64;
        centredQuads = (float4*)centred;
        blockX = tid % blockDimX;
        blockY = (tid / blockDimX) % blockDimY;
        blockZ = tid / (blockDimX * blockDimY);
        // Voxels lane and lane + 32 of the block (a = v & 3, b = (v >> 2) & 3, c = v >> 4).
        voxel0 = lane;
        voxel1 = lane + 32;
        flag0 = 0;
        flag1 = 0;
        rawValue0 = 0.0f;
        rawValue1 = 0.0f;
        loX = imageDimX;
        loY = imageDimY;
        loZ = imageDimZ;
        hiX = -1;
        hiY = -1;
        hiZ = -1;
        X = blockX * 4 + (voxel0 & 3);
        Y = blockY * 4 + ((voxel0 >> 2) & 3);
        Z = blockZ * 4 + (voxel0 >> 4);
        index0 = (Z * imageDimY + Y) * imageDimX + X;
        if (X < imageDimX && Y < imageDimY && Z < imageDimZ) {
            if (mask[index0] != 0) {
                flag0 = 1;
                rawValue0 = referenceImage[index0];
                loX = X;
                loY = Y;
                loZ = Z;
                hiX = X;
                hiY = Y;
                hiZ = Z;
            }
        }
        Z = blockZ * 4 + (voxel1 >> 4);
        index1 = (Z * imageDimY + Y) * imageDimX + X;
        if (X < imageDimX && Y < imageDimY && Z < imageDimZ) {
            if (mask[index1] != 0) {
                flag1 = 1;
                rawValue1 = referenceImage[index1];
                loX = min(loX, X);
                loY = min(loY, Y);
                loZ = min(loZ, Z);
                hiX = max(hiX, X);
                hiY = max(hiY, Y);
                hiZ = max(hiZ, Z);
            }
        }
        maskBits = ((unsigned long long)__ballot_sync(0xffffffffu, flag1 != 0) << 32) | (unsigned long long)__ballot_sync(0xffffffffu, flag0 != 0);
        voxelNumber = __popcll(maskBits);
        result.x = 0.0f;
        result.y = 0.0f;
        result.z = 0.0f;
        result.w = -2.0f;
        if (voxelNumber >= minimumVoxelNumber && voxelNumber > 0) {
            // The reference mean and variance: the plain sums, in its voxel order.
            centred[voxel0] = rawValue0;
            centred[voxel1] = rawValue1;
            __syncwarp();
            referenceMean = 0.0f;
            for (int v = 0; v < 64; v++) {
                if ((maskBits >> v) & 1ull) {
                    referenceMean += centred[v];
                }
            }
            referenceMean = referenceMean / (float)voxelNumber;
            __syncwarp();
            centred[voxel0] = rawValue0 - referenceMean;
            centred[voxel1] = rawValue1 - referenceMean;
            __syncwarp();
            referenceVariance = 0.0f;
            for (int v = 0; v < 64; v++) {
                if ((maskBits >> v) & 1ull) {
                    referenceValue = centred[v];
                    referenceVariance += referenceValue * referenceValue;
                }
            }
            if (referenceVariance > 0.0f) {
                loX = __reduce_min_sync(0xffffffffu, loX);
                loY = __reduce_min_sync(0xffffffffu, loY);
                loZ = __reduce_min_sync(0xffffffffu, loZ);
                hiX = __reduce_max_sync(0xffffffffu, hiX);
                hiY = __reduce_max_sync(0xffffffffu, hiY);
                hiZ = __reduce_max_sync(0xffffffffu, hiZ);
                // The search window: voxels (4 blockX - r .. 4 blockX + 3 + r, likewise y, z), 0 outside the image.
                originX = blockX * 4 - searchRadius;
                originY = blockY * 4 - searchRadius;
                originZ = blockZ * 4 - searchRadius;
                inverseEdge = 1.0f / (float)edge;
                // Four loads per lane in flight at a time, then their four stores.
                for (int i = lane; i < windowVolume; i += 128) {
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        row = (int)(((float)(i + 32 * q) + 0.5f) * inverseEdge);
                        dx = i + 32 * q - row * edge;
                        dz = (int)(((float)row + 0.5f) * inverseEdge);
                        dy = row - dz * edge;
                        X = originX + dx;
                        Y = originY + dy;
                        Z = originZ + dz;
                        staged[q] = 0.0f;
                        target[q] = dz * slicePitch + dy * edge + dx;
                        if (i + 32 * q < windowVolume && X >= 0 && X < imageDimX && Y >= 0 && Y < imageDimY && Z >= 0 && Z < imageDimZ) {
                            staged[q] = warpedImage[(Z * imageDimY + Y) * imageDimX + X];
                        }
                    }
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        if (i + 32 * q < windowVolume) {
                            window[target[q]] = staged[q];
                        }
                    }
                }
                __syncwarp();
                // Lane order: dx fastest, then dz, then dy (fewer bank conflicts with the padded slices).
                bestKey = ((unsigned long long)0x3fffffffu << 32) | (unsigned long long)(0xffffffffu - (unsigned int)((candidateNumber - 1) / 2));
                for (int t = lane; t < candidateNumber; t += 32) {
                    dx = t % span;
                    row = t / span;
                    dz = row % span;
                    dy = row / span;
                    if (loX + dx - searchRadius >= 0 && hiX + dx - searchRadius < imageDimX && loY + dy - searchRadius >= 0 && hiY + dy - searchRadius < imageDimY && loZ + dz - searchRadius >= 0 && hiZ + dz - searchRadius < imageDimZ) {
                        base = dz * slicePitch + dy * edge + dx;
                        warpedMean = 0.0f;
                        // A block with all 64 voxels (most used blocks) takes the loops without mask tests.
                        if (voxelNumber == 64) {
#pragma unroll
                            for (int c = 0; c < 4; c++) {
#pragma unroll
                                for (int b = 0; b < 4; b++) {
#pragma unroll
                                    for (int a = 0; a < 4; a++) {
                                        warpedMean += window[base + c * slicePitch + b * edge + a];
                                    }
                                }
                            }
                        } else {
#pragma unroll
                            for (int c = 0; c < 4; c++) {
#pragma unroll
                                for (int b = 0; b < 4; b++) {
#pragma unroll
                                    for (int a = 0; a < 4; a++) {
                                        if ((maskBits >> (c * 16 + b * 4 + a)) & 1ull) {
                                            warpedMean += window[base + c * slicePitch + b * edge + a];
                                        }
                                    }
                                }
                            }
                        }
                        warpedMean = warpedMean / (float)voxelNumber;
                        warpedVariance = 0.0f;
                        covariance = 0.0f;
                        if (voxelNumber == 64) {
#pragma unroll
                            for (int c = 0; c < 4; c++) {
#pragma unroll
                                for (int b = 0; b < 4; b++) {
                                    quad = centredQuads[c * 4 + b];
                                    reference4[0] = quad.x;
                                    reference4[1] = quad.y;
                                    reference4[2] = quad.z;
                                    reference4[3] = quad.w;
#pragma unroll
                                    for (int a = 0; a < 4; a++) {
                                        referenceValue = reference4[a];
                                        warpedValue = window[base + c * slicePitch + b * edge + a] - warpedMean;
                                        covariance += referenceValue * warpedValue;
                                        warpedVariance += warpedValue * warpedValue;
                                    }
                                }
                            }
                        } else {
#pragma unroll
                            for (int c = 0; c < 4; c++) {
#pragma unroll
                                for (int b = 0; b < 4; b++) {
                                    quad = centredQuads[c * 4 + b];
                                    reference4[0] = quad.x;
                                    reference4[1] = quad.y;
                                    reference4[2] = quad.z;
                                    reference4[3] = quad.w;
#pragma unroll
                                    for (int a = 0; a < 4; a++) {
                                        if ((maskBits >> (c * 16 + b * 4 + a)) & 1ull) {
                                            referenceValue = reference4[a];
                                            warpedValue = window[base + c * slicePitch + b * edge + a] - warpedMean;
                                            covariance += referenceValue * warpedValue;
                                            warpedVariance += warpedValue * warpedValue;
                                        }
                                    }
                                }
                            }
                        }
                        if (warpedVariance > 0.0f) {
                            ncc = covariance / sqrtf(referenceVariance * warpedVariance);
                            scoreBits = __float_as_uint(ncc);
                            orderBits = scoreBits ^ ((unsigned int)((int)scoreBits >> 31) | 0x80000000u);
                            order = (dz * span + dy) * span + dx;
                            key = ((unsigned long long)orderBits << 32) | (unsigned long long)(0xffffffffu - (unsigned int)order);
                            bestKey = max(bestKey, key);
                        }
                    }
                }
                for (int offset = 16; offset > 0; offset >>= 1) {
                    otherKey = __shfl_xor_sync(0xffffffffu, bestKey, offset);
                    bestKey = max(bestKey, otherKey);
                }
                order = (int)(0xffffffffu - (unsigned int)(bestKey & 0xffffffffull));
                orderBits = (unsigned int)(bestKey >> 32);
                scoreBits = orderBits ^ (((unsigned int)((int)orderBits >> 31) ^ 0xffffffffu) | 0x80000000u);
                result.x = (float)(order % span - searchRadius);
                result.y = (float)((order / span) % span - searchRadius);
                result.z = (float)(order / (span * span) - searchRadius);
                result.w = __uint_as_float(scoreBits);
            }
        }
        if (lane == 0) {
            blockResults[tid] = result;
        }
    }
}
