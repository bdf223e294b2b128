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
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
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
                    atomicAdd(&jointHistogram[referenceBin * warpedBinNumber + warpedBin], referenceWeight[a] * warpedWeight[b]);
                }
            }
        }
    }
}
