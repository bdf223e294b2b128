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

#define CONV_PATH 0  // switch: 0 the plain kernel (one thread per voxel, neighbours through the L1 cache); 1 a shared-memory tile of the block's inputs and halo, several outputs per thread
#define CONV_ITEMS 1  // switch: outputs per thread in path 1 (the grid shrinks by this factor); 1 for the plain kernel
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
#if CONV_PATH == 1
    // A CUDA block computes the CONV_ITEMS * B consecutive outputs (flat
    // indices) from blockIdx.x * CONV_ITEMS * B on. It first copies their
    // inputs and r more on either side (clipped to the image) into shared
    // memory with coalesced loads, and the 2r + 1 weights after them; then
    // each thread computes the outputs threadIdx.x + k B, k < CONV_ITEMS,
    // with the plain loop (same taps, same order, same float arithmetic),
    // reading the neighbours from the tile: every input is read from global
    // memory once per block instead of 2r + 1 times through the L1 cache.
    extern __shared__ float4 convolutionTile[];
    float* convolutionWeights;
    int start;
    int tile;
    int index;
    tile = blockDim.x * CONV_ITEMS;
    start = blockIdx.x * tile;
    voxelNumber = imageDimX * imageDimY * imageDimZ;
    convolutionWeights = (float*)(convolutionTile + tile + 2 * kernelRadius);
    for (int i = threadIdx.x; i < tile + 2 * kernelRadius; i += blockDim.x) {
        index = start - kernelRadius + i;
        if (index >= 0 && index < voxelNumber) {
            convolutionTile[i] = input[index];
        }
    }
    for (int i = threadIdx.x; i <= 2 * kernelRadius; i += blockDim.x) {
        convolutionWeights[i] = kernelWeights[i];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < CONV_ITEMS; k++) {
        tid = start + k * blockDim.x + threadIdx.x;
        if (tid < voxelNumber) {
            x = tid % imageDimX;
            sumX = 0.0f;
            sumY = 0.0f;
            sumZ = 0.0f;
            weightSum = 0.0f;
            for (int i = -kernelRadius; i <= kernelRadius; i++) {
                X = x + i;
                if (X >= 0 && X < imageDimX) {
                    weight = convolutionWeights[i + kernelRadius];
                    neighbour = convolutionTile[tid - start + kernelRadius + i];
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
#else
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
#endif
}
