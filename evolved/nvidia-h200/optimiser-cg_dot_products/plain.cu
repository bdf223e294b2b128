// The two sums of the Polak-Ribiere coefficient, one thread per control point.
//
// conjugateG holds g = -(previous gradient), gradient the new gradient
// (x, y, z; w not read). Every control point adds its terms to the two
// sums with float atomics:
//   sums[0] += g . g
//   sums[1] += (gradient + g) . gradient
// so gamma = sums[1] / sums[0] afterwards. sums must hold zeros before the
// launch; the order of the additions is not fixed, so the last bits of the
// sums vary from run to run.

extern "C" __global__ void cg_dot_products(const float4* gradient, const float4* conjugateG, int controlPointNumber, float* sums) {
    int tid;
    float4 gradientValue;
    float4 gValue;
    float gg;
    float dgg;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        gradientValue = gradient[tid];
        gValue = conjugateG[tid];
        gg = gValue.x * gValue.x + gValue.y * gValue.y + gValue.z * gValue.z;
        dgg = (gradientValue.x + gValue.x) * gradientValue.x + (gradientValue.y + gValue.y) * gradientValue.y + (gradientValue.z + gValue.z) * gradientValue.z;
        atomicAdd(&sums[0], gg);
        atomicAdd(&sums[1], dgg);
    }
}
