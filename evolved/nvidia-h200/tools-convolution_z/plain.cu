// Separable convolution along Z of a float4 vector field (e.g. a gradient).
//
// One thread per voxel. Only the x, y, z components are convolved; the output
// w component is set to 0 (the input w is never read). The image is stored x
// fastest, so the neighbour at offset i along Z lies
// i * imageDimX * imageDimY elements away (one slice per step).
//
// Border handling (as convolution_x): taps that fall outside the image are
// dropped and the result is divided by the sum of the weights of the taps
// actually used, so the kernel is truncated and renormalised at the border.
// The same division is applied in the interior, where it is a no-op for a
// kernel whose weights sum to 1. If the used weights sum to exactly 0 the
// output is 0.

extern "C" __global__ void convolution_z(const float4* input, int imageDimX, int imageDimY, int imageDimZ, const float* kernelWeights, int kernelRadius, float4* output) {
    int tid;
    int voxelNumber;
    int z;
    int Z;
    int sliceSize;
    float weight;
    float weightSum;
    float sumX;
    float sumY;
    float sumZ;
    float4 neighbour;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    voxelNumber = imageDimX * imageDimY * imageDimZ;
    if (tid < voxelNumber) {
        sliceSize = imageDimX * imageDimY;
        z = tid / sliceSize;
        sumX = 0.0f;
        sumY = 0.0f;
        sumZ = 0.0f;
        weightSum = 0.0f;
        for (int i = -kernelRadius; i <= kernelRadius; i++) {
            Z = z + i;
            if (Z >= 0 && Z < imageDimZ) {
                weight = kernelWeights[i + kernelRadius];
                neighbour = input[tid + i * sliceSize];
                sumX += weight * neighbour.x;
                sumY += weight * neighbour.y;
                sumZ += weight * neighbour.z;
                weightSum += weight;
            }
        }
        if (weightSum != 0.0f) {
            result.x = sumX / weightSum;
            result.y = sumY / weightSum;
            result.z = sumZ / weightSum;
        } else {
            result.x = 0.0f;
            result.y = 0.0f;
            result.z = 0.0f;
        }
        result.w = 0.0f;
        output[tid] = result;
    }
}
