// The joint histogram of two 8-bit images (their grey values stored as
// floats): 64 x 64 bins, four grey levels a bin along each axis. A pixel
// past the end leaves at once; a pixel that either image marks as padding
// (a value outside [0, 256)) is not counted; every other pixel counts one
// in its bin.
__device__ bool is_grey(float value) {
    return value >= 0.0f && value < 256.0f;
}

__device__ int joint_bin(float reference_value, float floating_value) {
    const int row = (int)reference_value >> 2;
    const int column = (int)floating_value >> 2;
    return row * 64 + column;
}

extern "C" __global__ void joint_histogram64(const float* reference, const float* floating, int pixels,
                                             unsigned int* histogram) {
    const int pixel = blockIdx.x * blockDim.x + threadIdx.x;
    if (pixel >= pixels) return;
    const float r = reference[pixel];
    const float f = floating[pixel];
    if (is_grey(r) && is_grey(f)) {
        atomicAdd(&histogram[joint_bin(r, f)], 1u);
    }
}
