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

#define CONV_ITEMS 8  // switch: outputs per thread along z in path 1 (the grid shrinks by this factor along z); 1 for the plain kernel
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
    // Each thread computes CONV_ITEMS consecutive outputs along z of one
    // (x, y) column (threads x fastest, so a warp's loads are coalesced).
    // It walks the inputs Z = z - r .. z + CONV_ITEMS - 1 + r once, four
    // at a time (the four loads in flight together; the last group may
    // load up to three inputs that no output needs), loading each in-image
    // input once, and adds it to every output whose taps reach it: output z + k takes input Z with tap i = Z - z - k. Inputs
    // come in increasing Z, so every output sums its taps in the plain
    // order (i from -r up) with the plain float arithmetic: the results are
    // the plain kernel's, from (CONV_ITEMS + 2r) / CONV_ITEMS loads per
    // output instead of 2r + 1.
    float accumulatorX[CONV_ITEMS];
    float accumulatorY[CONV_ITEMS];
    float accumulatorZ[CONV_ITEMS];
    float accumulatorW[CONV_ITEMS];
    float4 neighbours[4];
    int column;
    int groupNumber;
    int tap;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    sliceSize = imageDimX * imageDimY;
    groupNumber = (imageDimZ + CONV_ITEMS - 1) / CONV_ITEMS;
    if (tid < sliceSize * groupNumber) {
        column = tid % sliceSize;
        z = (tid / sliceSize) * CONV_ITEMS;
#pragma unroll
        for (int k = 0; k < CONV_ITEMS; k++) {
            accumulatorX[k] = 0.0f;
            accumulatorY[k] = 0.0f;
            accumulatorZ[k] = 0.0f;
            accumulatorW[k] = 0.0f;
        }
        for (int j = -kernelRadius; j < CONV_ITEMS + kernelRadius; j += 4) {
#pragma unroll
            for (int q = 0; q < 4; q++) {
                Z = z + j + q;
                if (Z >= 0 && Z < imageDimZ) {
                    neighbours[q] = input[Z * sliceSize + column];
                }
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                Z = z + j + q;
                if (Z >= 0 && Z < imageDimZ) {
                    neighbour = neighbours[q];
#pragma unroll
                    for (int k = 0; k < CONV_ITEMS; k++) {
                        tap = j + q - k;
                        if (tap >= -kernelRadius && tap <= kernelRadius) {
                            weight = kernelWeights[tap + kernelRadius];
                            accumulatorX[k] += weight * neighbour.x;
                            accumulatorY[k] += weight * neighbour.y;
                            accumulatorZ[k] += weight * neighbour.z;
                            accumulatorW[k] += weight;
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < CONV_ITEMS; k++) {
            if (z + k < imageDimZ) {
                sumX = accumulatorX[k];
                sumY = accumulatorY[k];
                sumZ = accumulatorZ[k];
                weightSum = accumulatorW[k];
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
                output[(z + k) * sliceSize + column] = result;
            }
        }
    }
}
