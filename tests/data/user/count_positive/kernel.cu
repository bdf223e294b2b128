// How many values are above a threshold: threads past the end leave at
// once, the others add one to the count for a value above it.
extern "C" __global__ void count_positive(const float* values, int n, float threshold, unsigned int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (values[i] > threshold) {
        atomicAdd(count, 1u);
    }
}
