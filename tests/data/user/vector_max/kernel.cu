// The largest value of a vector. CUDA has no atomicMax for floats, so the
// usual helper makes one from atomicCAS on the float's bits.
__device__ float atomicMaxFloat(float* address, float value) {
    int* bits = (int*)address;
    int old = *bits;
    int assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_int(fmaxf(value, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}

extern "C" __global__ void vector_max(const float* values, int n, float* result) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicMaxFloat(result, values[i]);
    }
}
