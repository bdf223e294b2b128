// A weighted sum of a vector, with a grid-stride loop as the user wrote it:
// the grid is capped, each thread steps through the vector a grid's width
// at a time and adds each weighted value to the total with an atomicAdd.
extern "C" __global__ void weighted_sum(const float* values, const float* weights, int n, float* total) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float term = weights[i] * values[i];
        atomicAdd(total, term);
    }
}
