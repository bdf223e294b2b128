// The dot product of two vectors: each thread multiplies one pair and adds
// it to the total with an atomicAdd.
extern "C" __global__ void dot_product(const float* x, const float* y, int n, float* result) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float product = x[i] * y[i];
        atomicAdd(result, product);
    }
}
