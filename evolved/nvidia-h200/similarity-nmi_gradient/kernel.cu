// Voxel-based gradient of normalised mutual information with respect to the
// deformation, NMI = (H_R + H_W) / H_RW (entropies of the reference and
// warped marginals and of the joint histogram of the Parzen-windowed
// intensities, in nats).
//
// Conventions of the joint histogram (as similarity_nmi_joint_histogram):
// an intensity is placed at bin position p = intensity * scale + offset; its
// cubic B-spline window, with u = p - floor(p), covers bins floor(p) - 1 ..
// floor(p) + 2 with weights
//     (1 - u)^3 / 6, (3u^3 - 6u^2 + 4) / 6, (-3u^3 + 3u^2 + 3u + 1) / 6, u^3 / 6
// and, with respect to p, derivatives
//     -(1 - u)^2 / 2, 3u^2 / 2 - 2u, -3u^2 / 2 + u + 1 / 2, u^2 / 2;
// bins outside the histogram are skipped.
//
// Inputs computed from the joint histogram of the current images:
// logJointProbability[r * warpedBinNumber + w] = log p(r, w) and
// logWarpedProbability[w] = log p_W(w) (0 for an empty bin), the NMI value
// and the joint entropy H_RW. Moving one warped intensity changes only the
// warped-side windows of its voxel, so, with N the histogram's total mass,
//     N * dNMI/dW = (NMI * sum_ab wR[a] dwW[b] logJoint - sum_b dwW[b] logWarped)
//                   * warpedScale / H_RW
// and the output at active voxel i is N * dNMI/dW * warpedGradient[i] (the
// warped image's gradient with respect to the sampling position): the
// gradient of NMI with respect to the deformation, times N. The factor N
// keeps the values independent of the mask size (the registration normalises
// the gradient afterwards, so a constant factor does not matter).
//
// activeVoxels[i] is the linear index of active voxel i in both images;
// warpedGradient and nmiGradient are indexed by i. Only x, y and z of
// warpedGradient are read; the output w is 0.

extern "C" __global__ void __launch_bounds__(256, 8) similarity_nmi_gradient(const float* referenceImage, const float* warpedImage, const float4* warpedGradient, const int* activeVoxels, int activeVoxelNumber, int referenceBinNumber, int warpedBinNumber, float referenceScale, float referenceOffset, float warpedScale, float warpedOffset, const float* logJointProbability, const float* logWarpedProbability, float nmiValue, float jointEntropy, float4* nmiGradient) {
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
    float warpedDerivative[4];
    float jointSum;
    float warpedSum;
    float derivative;
    float4 gradient;
    float4 result;
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
        warpedDerivative[0] = -0.5f * v * v;
        warpedDerivative[1] = 1.5f * u * u - 2.0f * u;
        warpedDerivative[2] = -1.5f * u * u + u + 0.5f;
        warpedDerivative[3] = 0.5f * u * u;
        jointSum = 0.0f;
        warpedSum = 0.0f;
        for (int b = 0; b < 4; b++) {
            warpedBin = warpedPre - 1 + b;
            if (warpedBin >= 0 && warpedBin < warpedBinNumber) {
                warpedSum += warpedDerivative[b] * logWarpedProbability[warpedBin];
                for (int a = 0; a < 4; a++) {
                    referenceBin = referencePre - 1 + a;
                    if (referenceBin >= 0 && referenceBin < referenceBinNumber) {
                        jointSum += referenceWeight[a] * warpedDerivative[b] * logJointProbability[referenceBin * warpedBinNumber + warpedBin];
                    }
                }
            }
        }
        derivative = (nmiValue * jointSum - warpedSum) * warpedScale / jointEntropy;
        gradient = warpedGradient[tid];
        result.x = derivative * gradient.x;
        result.y = derivative * gradient.y;
        result.z = derivative * gradient.z;
        result.w = 0.0f;
        nmiGradient[tid] = result;
    }
}
