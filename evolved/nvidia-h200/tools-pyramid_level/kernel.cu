// One level of an image pyramid: Gaussian smoothing and decimation by 2 along
// every axis.
//
// One thread per output voxel. Output voxel (x, y, z) sits on input voxel
// (2x, 2y, 2z) (the output has (inputDim + 1) / 2 voxels per axis) and is the
// weighted mean of the input neighbourhood of 2 kernelRadius + 1 voxels per
// axis around it, with the separable weights
// kernelWeights[a] * kernelWeights[b] * kernelWeights[c] (e.g. the binomial
// (1, 4, 6, 4, 1) / 16 per axis, an approximate Gaussian).
//
// Border handling (as the convolutions): taps outside the input image are
// dropped and the sum is divided by the sum of the weights actually used, so
// the kernel is clipped and renormalised at the border. If the used weights
// sum to exactly 0 the output is 0.

extern "C" __global__ void pyramid_level(const float* input, int inputDimX, int inputDimY, int inputDimZ, const float* kernelWeights, int kernelRadius, int outputDimX, int outputDimY, int outputDimZ, float* output) {
    int tid;
    int outputVoxelNumber;
    int x;
    int y;
    int z;
    int X;
    int Y;
    int Z;
    float weight;
    float weightSum;
    float sum;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    outputVoxelNumber = outputDimX * outputDimY * outputDimZ;
    if (tid < outputVoxelNumber) {
        z = tid / (outputDimX * outputDimY);
        y = (tid / outputDimX) % outputDimY;
        x = tid % outputDimX;
        sum = 0.0f;
        weightSum = 0.0f;
        #pragma unroll 4
        for (int c = -kernelRadius; c <= kernelRadius; c++) {
            Z = 2 * z + c;
            if (Z >= 0 && Z < inputDimZ) {
                #pragma unroll 4
                for (int b = -kernelRadius; b <= kernelRadius; b++) {
                    Y = 2 * y + b;
                    if (Y >= 0 && Y < inputDimY) {
                        for (int a = -kernelRadius; a <= kernelRadius; a++) {
                            X = 2 * x + a;
                            if (X >= 0 && X < inputDimX) {
                                weight = kernelWeights[a + kernelRadius] * kernelWeights[b + kernelRadius] * kernelWeights[c + kernelRadius];
                                sum += weight * input[(Z * inputDimY + Y) * inputDimX + X];
                                weightSum += weight;
                            }
                        }
                    }
                }
            }
        }
        if (weightSum != 0.0f) {
            output[tid] = sum / weightSum;
        } else {
            output[tid] = 0.0f;
        }
    }
}
