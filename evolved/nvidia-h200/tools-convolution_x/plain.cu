// Separable convolution along X of a float4 vector field (e.g. a gradient).
//
// One thread per voxel. Only the x, y, z components are convolved; the output
// w component is set to 0 (the input w is never read).
//
// Border handling: taps that fall outside the image are dropped and the
// result is divided by the sum of the weights of the taps actually used, so
// the kernel is truncated and renormalised at the border. The same division
// is applied in the interior, where it is a no-op for a kernel whose weights
// sum to 1. If the used weights sum to exactly 0 the output is 0.

extern "C" __global__ void convolution_x(const float4* input, int imageDimX, int imageDimY, int imageDimZ, const float* kernelWeights, int kernelRadius, float4* output) {
    int tid;
    int voxelNumber;
    int x;
    int X;
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
        x = tid % imageDimX;
        sumX = 0.0f;
        sumY = 0.0f;
        sumZ = 0.0f;
        weightSum = 0.0f;
        for (int i = -kernelRadius; i <= kernelRadius; i++) {
            X = x + i;
            if (X >= 0 && X < imageDimX) {
                weight = kernelWeights[i + kernelRadius];
                neighbour = input[tid + i];
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
