// The two sums of a masked mean: the sum of the values inside a mask and
// how many there are. The guard keeps its else branch for threads past the
// end, which return; a thread inside adds its value and one to the two
// totals when its mask is set.
extern "C" __global__ void masked_mean(const float* values, const int* mask, int n, float* sum, unsigned int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (mask[i] != 0) {
            atomicAdd(sum, values[i]);
            atomicAdd(count, 1u);
        }
    } else {
        return;
    }
}
