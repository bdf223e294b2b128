// A 256-bin histogram of values in [0, 1): each thread finds its value's
// bin with a helper (clamped to the histogram) and counts it with a global
// atomicAdd.
__device__ int bin_of(float value) {
    int bin = (int)(value * 256.0f);
    return bin < 0 ? 0 : (bin > 255 ? 255 : bin);
}

extern "C" __global__ void histogram256(const float* values, int n, unsigned int* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[bin_of(values[i])], 1u);
    }
}
