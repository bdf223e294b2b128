// Control-point update along the search direction, one thread per control point.
//
// controlPointGrid = bestControlPointGrid + alpha * searchDirection for x, y
// and z, with alpha the step of the line search; w is written as 0 (no w
// is read).

extern "C" __global__ void control_point_update(const float4* bestControlPointGrid, const float4* searchDirection, int controlPointNumber, float alpha, float4* controlPointGrid) {
    int tid;
    float4 best;
    float4 direction;
    float4 value;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        best = bestControlPointGrid[tid];
        direction = searchDirection[tid];
        value.x = best.x + alpha * direction.x;
        value.y = best.y + alpha * direction.y;
        value.z = best.z + alpha * direction.z;
        value.w = 0.0f;
        controlPointGrid[tid] = value;
    }
}
