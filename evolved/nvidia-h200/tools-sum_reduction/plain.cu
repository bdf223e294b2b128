// Sum of a float array (e.g. the per-voxel terms of the SSD before the
// similarity value is formed).
//
// One thread per value: each value is added to sum[0] with a global float
// atomicAdd. sum[0] must hold 0.0f before the launch (the caller supplies it;
// the workload does). Float addition is not associative and the order of the
// atomics changes from run to run, so the result varies in its last bits
// between runs (see the spec's tolerance note).

extern "C" __global__ void sum_reduction(const float* values, int valueNumber, float* sum) {
    int tid;
    float value;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < valueNumber) {
        value = values[tid];
        atomicAdd(sum, value);
    }
}
