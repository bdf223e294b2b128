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

extern "C" __global__ void similarity_lncc(const float* referenceImage, const float* warpedImage, int imageDimX, int imageDimY, int imageDimZ, const int* activeVoxels, int activeVoxelNumber, int windowRadius, float* lnccValues) {
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
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        z = index / (imageDimX * imageDimY);
        y = (index - z * imageDimX * imageDimY) / imageDimX;
        x = index - (z * imageDimY + y) * imageDimX;
        referenceCentre = referenceImage[index];
        warpedCentre = warpedImage[index];
        count = 0.0f;
        sumReference = 0.0f;
        sumWarped = 0.0f;
        sumReference2 = 0.0f;
        sumWarped2 = 0.0f;
        sumProduct = 0.0f;
        for (int c = -windowRadius; c <= windowRadius; c++) {
            Z = z + c;
            for (int b = -windowRadius; b <= windowRadius; b++) {
                Y = y + b;
                for (int a = -windowRadius; a <= windowRadius; a++) {
                    X = x + a;
                    if (X >= 0 && X < imageDimX && Y >= 0 && Y < imageDimY && Z >= 0 && Z < imageDimZ) {
                        neighbour = (Z * imageDimY + Y) * imageDimX + X;
                        referenceValue = referenceImage[neighbour] - referenceCentre;
                        warpedValue = warpedImage[neighbour] - warpedCentre;
                        sumReference += referenceValue;
                        sumWarped += warpedValue;
                        sumReference2 += referenceValue * referenceValue;
                        sumWarped2 += warpedValue * warpedValue;
                        sumProduct += referenceValue * warpedValue;
                        count += 1.0f;
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
