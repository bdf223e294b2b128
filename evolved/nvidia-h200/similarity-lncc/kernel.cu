// Local normalised cross-correlation between the reference image I and the
// warped image J at every active voxel, over the cube of half-width
// windowRadius ((2r + 1)^3 voxels) centred on it, clipped at the image
// borders. Every voxel of the window inside the image counts, active or not.
//
// With n the number of voxels in the window,
//     var(I) = sum(I^2) / n - (sum(I) / n)^2, var(J) likewise,
//     cov(I, J) = sum(IJ) / n - sum(I) sum(J) / n^2,
//     LNCC = cov(I, J) / sqrt(var(I) var(J)), or 0 where var(I) or var(J) is not positive.
// The sums are taken of the intensities minus those of the centre voxel
// (variances and covariance do not change): the raw sums of squares of
// intensities near 100 would lose most of a window's variance to float
// rounding, and a constant window gives exactly zero variance.
//
// activeVoxels[i] is the linear index (x + dimX * (y + dimY * z)) of active
// voxel i; its LNCC is written to lnccValues[activeVoxels[i]] (an image on the
// reference grid); elements of non-active voxels are not written.

#define LNCC_TILE 2048  // switch: path 1: floats per image in the shared-memory tile (dynamic shared memory of 8 LNCC_TILE bytes); the plain kernel ignores it
extern "C" __global__ void __launch_bounds__(1024, 2) similarity_lncc(const float* referenceImage, const float* warpedImage, int imageDimX, int imageDimY, int imageDimZ, const int* activeVoxels, int activeVoxelNumber, int windowRadius, float* lnccValues) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int X;
    int Y;
    int Z;
    int neighbour;
    float referenceCentre;
    float warpedCentre;
    float referenceValue;
    float warpedValue;
    float count;
    float sumReference;
    float sumWarped;
    float sumReference2;
    float sumWarped2;
    float sumProduct;
    float meanReference;
    float meanWarped;
    float varianceReference;
    float varianceWarped;
    float covariance;
    float lncc;
    // A CUDA block handles the B consecutive entries of activeVoxels from
    // blockIdx.x * B on (one per thread, as the plain kernel). The block
    // reduces the smallest and largest x, y, z of its voxels (threads past
    // activeVoxelNumber do not count; the list need not be sorted): a warp
    // reduction, then each thread reduces the warps' results from shared
    // memory (the block size is a multiple of 32). The box that holds every
    // window of the block is [min - r, max + r] per axis, clipped to the
    // image. When it has at most LNCC_TILE voxels (the same decision for the
    // whole block), the block copies both images' intensities in the box
    // into dynamic shared memory (reference, then warped, LNCC_TILE floats
    // each) with loads coalesced along x, and every thread sums its window
    // from the tile; otherwise from global memory. Either way the window
    // loops run over the window clipped to the image (no per-voxel bounds
    // test), in the plain kernel's order (c, then b, then a, each upwards),
    // over the same voxels, so every sum takes the same float additions in
    // the same order: the results are bit-identical to the plain kernel's.
    // The window's voxel count is the product of the clipped extents, an
    // integer below 2^24, so the float equals the plain kernel's count of
    // 1.0f additions.
    extern __shared__ float lnccTile[];
    float* referenceTile;
    float* warpedTile;
    int* extremes;
    int lane;
    int warp;
    int lowX;
    int lowY;
    int lowZ;
    int highX;
    int highY;
    int highZ;
    int boxX;
    int boxY;
    int boxZ;
    int boxDimX;
    int boxDimY;
    int boxDimZ;
    int boxVolume;
    int offsetX;
    int offsetY;
    int offsetZ;
    int row;
    int rowStart;
    int tileRow;
    int element;
    int firstA;
    int lastA;
    int firstB;
    int lastB;
    int firstC;
    int lastC;
    referenceTile = lnccTile;
    warpedTile = lnccTile + LNCC_TILE;
    extremes = (int*)lnccTile;
    lane = threadIdx.x & 31;
    warp = threadIdx.x >> 5;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    index = 0;
    x = 0;
    y = 0;
    z = 0;
    lowX = imageDimX;
    lowY = imageDimY;
    lowZ = imageDimZ;
    highX = -1;
    highY = -1;
    highZ = -1;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        z = index / (imageDimX * imageDimY);
        y = (index - z * imageDimX * imageDimY) / imageDimX;
        x = index - (z * imageDimY + y) * imageDimX;
        lowX = x;
        lowY = y;
        lowZ = z;
        highX = x;
        highY = y;
        highZ = z;
    }
    lowX = __reduce_min_sync(0xffffffffu, lowX);
    lowY = __reduce_min_sync(0xffffffffu, lowY);
    lowZ = __reduce_min_sync(0xffffffffu, lowZ);
    highX = __reduce_max_sync(0xffffffffu, highX);
    highY = __reduce_max_sync(0xffffffffu, highY);
    highZ = __reduce_max_sync(0xffffffffu, highZ);
    if (lane == 0) {
        extremes[6 * warp] = lowX;
        extremes[6 * warp + 1] = lowY;
        extremes[6 * warp + 2] = lowZ;
        extremes[6 * warp + 3] = highX;
        extremes[6 * warp + 4] = highY;
        extremes[6 * warp + 5] = highZ;
    }
    __syncthreads();
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) {
        lowX = min(lowX, extremes[6 * w]);
        lowY = min(lowY, extremes[6 * w + 1]);
        lowZ = min(lowZ, extremes[6 * w + 2]);
        highX = max(highX, extremes[6 * w + 3]);
        highY = max(highY, extremes[6 * w + 4]);
        highZ = max(highZ, extremes[6 * w + 5]);
    }
    // Every thread has read the extremes before the tile overwrites them.
    __syncthreads();
    // The box of the block's windows; an empty extent (a block without
    // active voxels) gives volume 0.
    boxX = max(lowX - windowRadius, 0);
    boxY = max(lowY - windowRadius, 0);
    boxZ = max(lowZ - windowRadius, 0);
    boxDimX = max(min(highX + windowRadius, imageDimX - 1) - boxX + 1, 0);
    boxDimY = max(min(highY + windowRadius, imageDimY - 1) - boxY + 1, 0);
    boxDimZ = max(min(highZ + windowRadius, imageDimZ - 1) - boxZ + 1, 0);
    boxVolume = boxDimX * boxDimY * boxDimZ;
    if (boxVolume <= LNCC_TILE) {
        for (int i = threadIdx.x; i < boxVolume; i += blockDim.x) {
            row = i / boxDimX;
            offsetX = i - row * boxDimX;
            offsetZ = row / boxDimY;
            offsetY = row - offsetZ * boxDimY;
            neighbour = ((boxZ + offsetZ) * imageDimY + boxY + offsetY) * imageDimX + boxX + offsetX;
            referenceTile[i] = referenceImage[neighbour];
            warpedTile[i] = warpedImage[neighbour];
        }
    }
    __syncthreads();
    if (tid < activeVoxelNumber) {
        // The window clipped to the image: the voxels the plain kernel's test admits.
        firstC = max(-windowRadius, -z);
        lastC = min(windowRadius, imageDimZ - 1 - z);
        firstB = max(-windowRadius, -y);
        lastB = min(windowRadius, imageDimY - 1 - y);
        firstA = max(-windowRadius, -x);
        lastA = min(windowRadius, imageDimX - 1 - x);
        count = (float)((lastC - firstC + 1) * (lastB - firstB + 1) * (lastA - firstA + 1));
        sumReference = 0.0f;
        sumWarped = 0.0f;
        sumReference2 = 0.0f;
        sumWarped2 = 0.0f;
        sumProduct = 0.0f;
        if (boxVolume <= LNCC_TILE) {
            element = ((z - boxZ) * boxDimY + y - boxY) * boxDimX + x - boxX;
            referenceCentre = referenceTile[element];
            warpedCentre = warpedTile[element];
            for (int c = firstC; c <= lastC; c++) {
                for (int b = firstB; b <= lastB; b++) {
                    tileRow = ((z + c - boxZ) * boxDimY + y + b - boxY) * boxDimX + x - boxX;
                    for (int a = firstA; a <= lastA; a++) {
                        element = tileRow + a;
                        referenceValue = referenceTile[element] - referenceCentre;
                        warpedValue = warpedTile[element] - warpedCentre;
                        sumReference += referenceValue;
                        sumWarped += warpedValue;
                        sumReference2 += referenceValue * referenceValue;
                        sumWarped2 += warpedValue * warpedValue;
                        sumProduct += referenceValue * warpedValue;
                    }
                }
            }
        } else {
            referenceCentre = referenceImage[index];
            warpedCentre = __ldg(&warpedImage[index]);
            for (int c = firstC; c <= lastC; c++) {
                for (int b = firstB; b <= lastB; b++) {
                    rowStart = ((z + c) * imageDimY + y + b) * imageDimX + x;
                    for (int a = firstA; a <= lastA; a++) {
                        neighbour = rowStart + a;
                        referenceValue = referenceImage[neighbour] - referenceCentre;
                        warpedValue = warpedImage[neighbour] - warpedCentre;
                        sumReference += referenceValue;
                        sumWarped += warpedValue;
                        sumReference2 += referenceValue * referenceValue;
                        sumWarped2 += warpedValue * warpedValue;
                        sumProduct += referenceValue * warpedValue;
                    }
                }
            }
        }
        meanReference = sumReference / count;
        meanWarped = sumWarped / count;
        varianceReference = sumReference2 / count - meanReference * meanReference;
        varianceWarped = sumWarped2 / count - meanWarped * meanWarped;
        covariance = sumProduct / count - meanReference * meanWarped;
        if (varianceReference > 0.0f && varianceWarped > 0.0f) {
            lncc = covariance / sqrtf(varianceReference * varianceWarped);
        } else {
            lncc = 0.0f;
        }
        lnccValues[index] = lncc;
    }
}
