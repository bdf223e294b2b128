// Jacobian matrices (and their determinants) of a dense deformation field.
//
// One thread per voxel of the reference image (x fastest). The field is in
// voxel space, so J[r][c] = d deformation_r / d x_c with unit voxel steps.
// Derivatives are central finite differences, (D(v + 1) - D(v - 1)) / 2,
// and one-sided differences at the image border, D(v + 1) - D(v) or
// D(v) - D(v - 1); every axis must have at least 2 voxels.
// jacobianMatrices holds 9 floats per voxel, row by row:
// [9 i + 3 r + c] = J[r][c]; jacobianDeterminants[i] = det J (cofactor
// expansion along the first row).

extern "C" __global__ void __launch_bounds__(512, 1) deformation_jacobian(const float4* deformationField, int imageDimX, int imageDimY, int imageDimZ, float* jacobianMatrices, float* jacobianDeterminants) {
    int tid;
    int voxelNumber;
    int x;
    int y;
    int z;
    int previous;
    int next;
    float span;
    float4 before;
    float4 after;
    float jacobian[9];
    float determinant;
    // gi stage: the threads' records pass through shared memory; the block moves them to and from global memory in consecutive elements
    extern __shared__ float4 gi_stage_area[];
    const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item
    float* gi_stage_jacobianMatrices = reinterpret_cast<float*>(gi_stage_area);  // 9 a thread
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    voxelNumber = imageDimX * imageDimY * imageDimZ;
    if (tid < voxelNumber) {
        x = tid % imageDimX;
        y = (tid / imageDimX) % imageDimY;
        z = tid / (imageDimX * imageDimY);
        previous = x;
        next = x;
        if (x > 0) {
            previous = x - 1;
        }
        if (x < imageDimX - 1) {
            next = x + 1;
        }
        before = deformationField[(z * imageDimY + y) * imageDimX + previous];
        after = deformationField[(z * imageDimY + y) * imageDimX + next];
        span = (float)(next - previous);
        jacobian[0] = (after.x - before.x) / span;
        jacobian[3] = (after.y - before.y) / span;
        jacobian[6] = (after.z - before.z) / span;
        previous = y;
        next = y;
        if (y > 0) {
            previous = y - 1;
        }
        if (y < imageDimY - 1) {
            next = y + 1;
        }
        before = deformationField[(z * imageDimY + previous) * imageDimX + x];
        after = deformationField[(z * imageDimY + next) * imageDimX + x];
        span = (float)(next - previous);
        jacobian[1] = (after.x - before.x) / span;
        jacobian[4] = (after.y - before.y) / span;
        jacobian[7] = (after.z - before.z) / span;
        previous = z;
        next = z;
        if (z > 0) {
            previous = z - 1;
        }
        if (z < imageDimZ - 1) {
            next = z + 1;
        }
        before = deformationField[(previous * imageDimY + y) * imageDimX + x];
        after = deformationField[(next * imageDimY + y) * imageDimX + x];
        span = (float)(next - previous);
        jacobian[2] = (after.x - before.x) / span;
        jacobian[5] = (after.y - before.y) / span;
        jacobian[8] = (after.z - before.z) / span;
        determinant = jacobian[0] * (jacobian[4] * jacobian[8] - jacobian[5] * jacobian[7]) - jacobian[1] * (jacobian[3] * jacobian[8] - jacobian[5] * jacobian[6]) + jacobian[2] * (jacobian[3] * jacobian[7] - jacobian[4] * jacobian[6]);
        for (int i = 0; i < 9; i++) {
            gi_stage_jacobianMatrices[(9 * tid + i) - 9 * gi_stage_first] = jacobian[i];
        }
        jacobianDeterminants[tid] = determinant;
    }
    __syncthreads();  // gi stage: every record of the block is in shared memory
    {
        long long gi_items = (long long)(voxelNumber) - gi_stage_first;  // the block's items below the guard's bound
        if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;
        for (int gi_j = threadIdx.x; gi_j < 9 * (int)gi_items; gi_j += blockDim.x)
            jacobianMatrices[9 * gi_stage_first + gi_j] = gi_stage_jacobianMatrices[gi_j];
    }
}
