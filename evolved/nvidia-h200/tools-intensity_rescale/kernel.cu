// Linear intensity rescaling (e.g. to the bin range of the joint histogram).
//
// One thread per voxel:
//     out = (in - inputMin) * (newMax - newMin) / (inputMax - inputMin) + newMin
// so inputMin maps to newMin and inputMax to newMax. inputMin and inputMax are
// given (the image's minimum and maximum, or thresholds); values outside
// [inputMin, inputMax] are mapped by the same line, not clamped. The caller
// guarantees inputMax != inputMin.

extern "C" __global__ void intensity_rescale(const float* image, int voxelNumber, float inputMin, float inputMax, float newMin, float newMax, float* rescaled) {
    int tid;
    float value;
    for (int gi_item = 0; gi_item < 8; gi_item++) {
        tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x;
        if (tid < voxelNumber) {
            value = __ldg(&image[tid]);
            rescaled[tid] = (value - inputMin) * (newMax - newMin) / (inputMax - inputMin) + newMin;
        }
    }
}
