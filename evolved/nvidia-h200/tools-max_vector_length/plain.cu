// Maximal length of the vectors of a float4 field (e.g. the node gradient,
// before the conjugate-gradient step normalises it).
//
// One thread per vector: the Euclidean length of (x, y, z) (w is never read)
// is folded into maxLength[0] with an atomic maximum on the float's bits read
// as an int. For non-negative floats the int order is the float order, and
// lengths are never negative, so this is an exact maximum whatever the order
// of the atomics. maxLength[0] must hold 0.0f before the launch (the caller
// supplies it; the workload does).

extern "C" __global__ void max_vector_length(const float4* field, int vectorNumber, float* maxLength) {
    int tid;
    float length;
    float4 vector;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < vectorNumber) {
        vector = field[tid];
        length = sqrtf(vector.x * vector.x + vector.y * vector.y + vector.z * vector.z);
        atomicMax((int*)maxLength, __float_as_int(length));
    }
}
