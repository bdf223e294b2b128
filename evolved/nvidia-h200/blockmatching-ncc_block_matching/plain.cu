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
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    blockNumber = blockDimX * blockDimY * blockDimZ;
    if (tid < blockNumber) {
        blockX = tid % blockDimX;
        blockY = (tid / blockDimX) % blockDimY;
        blockZ = tid / (blockDimX * blockDimY);
        result.x = 0.0f;
        result.y = 0.0f;
        result.z = 0.0f;
        result.w = -2.0f;
        voxelNumber = 0;
        referenceMean = 0.0f;
        for (int c = 0; c < 4; c++) {
            Z = blockZ * 4 + c;
            for (int b = 0; b < 4; b++) {
                Y = blockY * 4 + b;
                for (int a = 0; a < 4; a++) {
                    X = blockX * 4 + a;
                    if (X < imageDimX && Y < imageDimY && Z < imageDimZ) {
                        index = (Z * imageDimY + Y) * imageDimX + X;
                        if (mask[index] != 0) {
                            referenceMean += referenceImage[index];
                            voxelNumber++;
                        }
                    }
                }
            }
        }
        if (voxelNumber >= minimumVoxelNumber && voxelNumber > 0) {
            referenceMean = referenceMean / (float)voxelNumber;
            referenceVariance = 0.0f;
            for (int c = 0; c < 4; c++) {
                Z = blockZ * 4 + c;
                for (int b = 0; b < 4; b++) {
                    Y = blockY * 4 + b;
                    for (int a = 0; a < 4; a++) {
                        X = blockX * 4 + a;
                        if (X < imageDimX && Y < imageDimY && Z < imageDimZ) {
                            index = (Z * imageDimY + Y) * imageDimX + X;
                            if (mask[index] != 0) {
                                referenceValue = referenceImage[index] - referenceMean;
                                referenceVariance += referenceValue * referenceValue;
                            }
                        }
                    }
                }
            }
            if (referenceVariance > 0.0f) {
                for (int k = -searchRadius; k <= searchRadius; k++) {
                    for (int j = -searchRadius; j <= searchRadius; j++) {
                        for (int i = -searchRadius; i <= searchRadius; i++) {
                            inside = 1;
                            warpedMean = 0.0f;
                            for (int c = 0; c < 4; c++) {
                                Z = blockZ * 4 + c;
                                for (int b = 0; b < 4; b++) {
                                    Y = blockY * 4 + b;
                                    for (int a = 0; a < 4; a++) {
                                        X = blockX * 4 + a;
                                        if (X < imageDimX && Y < imageDimY && Z < imageDimZ) {
                                            index = (Z * imageDimY + Y) * imageDimX + X;
                                            if (mask[index] != 0) {
                                                if (X + i >= 0 && X + i < imageDimX && Y + j >= 0 && Y + j < imageDimY && Z + k >= 0 && Z + k < imageDimZ) {
                                                    warpedIndex = ((Z + k) * imageDimY + Y + j) * imageDimX + X + i;
                                                    warpedMean += warpedImage[warpedIndex];
                                                } else {
                                                    inside = 0;
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                            if (inside == 1) {
                                warpedMean = warpedMean / (float)voxelNumber;
                                warpedVariance = 0.0f;
                                covariance = 0.0f;
                                for (int c = 0; c < 4; c++) {
                                    Z = blockZ * 4 + c;
                                    for (int b = 0; b < 4; b++) {
                                        Y = blockY * 4 + b;
                                        for (int a = 0; a < 4; a++) {
                                            X = blockX * 4 + a;
                                            if (X < imageDimX && Y < imageDimY && Z < imageDimZ) {
                                                index = (Z * imageDimY + Y) * imageDimX + X;
                                                if (mask[index] != 0) {
                                                    warpedIndex = ((Z + k) * imageDimY + Y + j) * imageDimX + X + i;
                                                    referenceValue = referenceImage[index] - referenceMean;
                                                    warpedValue = warpedImage[warpedIndex] - warpedMean;
                                                    covariance += referenceValue * warpedValue;
                                                    warpedVariance += warpedValue * warpedValue;
                                                }
                                            }
                                        }
                                    }
                                }
                                if (warpedVariance > 0.0f) {
                                    ncc = covariance / sqrtf(referenceVariance * warpedVariance);
                                    if (ncc > result.w) {
                                        result.x = (float)i;
                                        result.y = (float)j;
                                        result.z = (float)k;
                                        result.w = ncc;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        blockResults[tid] = result;
    }
}
