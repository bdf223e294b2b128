// Conjugate-gradient direction update, one thread per control point.
//
// With gamma the Polak-Ribiere coefficient of this iteration:
//   g = -gradient
//   h = g + gamma * h
// g and h are stored back in conjugateG and conjugateH, and the gradient
// array is overwritten with the new search direction h, which the
// control-point update then follows. Every array is written with w = 0
// (no w is read).

extern "C" __global__ void cg_direction_update(float4* gradient, float4* conjugateG, float4* __restrict__ conjugateH, int controlPointNumber, float gamma) {
    int tid;
    float4 gradientValue;
    float4 gValue;
    float4 hValue;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        gradientValue = gradient[tid];
        gValue.x = -gradientValue.x;
        hValue = conjugateH[tid];
        gradient[tid] = hValue;
        gValue.y = -gradientValue.y;
        gValue.z = -gradientValue.z;
        gValue.w = 0.0f;
        conjugateG[tid] = gValue;
        hValue = conjugateH[tid];
        hValue.x = gValue.x + gamma * hValue.x;
        hValue.y = gValue.y + gamma * hValue.y;
        hValue.z = gValue.z + gamma * hValue.z;
        hValue.w = 0.0f;
        gradientValue = gradient[tid];
        conjugateH[tid] = hValue;
        gradient[tid] = hValue;
    }
}
