// Minimum and maximum intensity of an image (e.g. before rescaling it for the
// joint histogram).
//
// One thread per voxel. Each intensity is folded into minMax[0] (minimum) and
// minMax[1] (maximum) with integer atomics on the float's bits, which order
// floats exactly when the sign is taken into account: for a non-negative
// float (sign bit clear) the int order is the float order, so atomicMin /
// atomicMax on ints apply; for a negative float (sign bit set) the unsigned
// order is the reverse of the float order, so the roles swap: atomicMax on
// unsigned for the minimum, atomicMin on unsigned for the maximum. A stored
// non-negative value (unsigned below 0x80000000) always wins against a
// negative one in those unsigned comparisons, and vice versa for the signed
// ones, so mixed signs are handled. The result is exact and independent of
// the order of the atomics. minMax must hold (+inf, -inf) before the launch
// (the caller supplies it; the workload does).

extern "C" __global__ void intensity_minmax(const float* image, int voxelNumber, float* minMax) {
    int tid;
    float value;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < voxelNumber) {
        value = image[tid];
        if (__float_as_int(value) >= 0) {
            atomicMin((int*)&minMax[0], __float_as_int(value));
            atomicMax((int*)&minMax[1], __float_as_int(value));
        } else {
            atomicMax((unsigned int*)&minMax[0], __float_as_uint(value));
            atomicMin((unsigned int*)&minMax[1], __float_as_uint(value));
        }
    }
}
