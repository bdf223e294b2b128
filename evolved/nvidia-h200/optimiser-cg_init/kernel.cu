// Conjugate-gradient initialisation, one thread per control point.
//
// The objective's gradient at every control point (x, y, z; w not read)
// gives the first search direction: g = -gradient and h = g. Both conjugate
// arrays are written with w = 0.

extern "C" __global__ void cg_init(const float4* gradient, int controlPointNumber, float4* conjugateG, float4* conjugateH) {
    int tid;
    float4 gradientValue;
    float4 gValue;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        gradientValue = gradient[tid];
        gValue.x = -gradientValue.x;
        gValue.y = -gradientValue.y;
        gValue.z = -gradientValue.z;
        gValue.w = 0.0f;
        conjugateG[tid] = gValue;
        conjugateH[tid] = gValue;
    }
}
