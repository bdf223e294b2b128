// Approximate Jacobian of a cubic B-spline free-form deformation at the
// control-point nodes, and its determinant.
//
// Voxel space, grid convention of bspline_deformation_field: control point
// (i, j, k) sits at voxel ((i - 1) * spacingX, (j - 1) * spacingY,
// (k - 1) * spacingZ) and holds a displacement (x, y, z; w unused). The
// deformation is identity + displacement, so its Jacobian is
// I + d(displacement)/dx. At a node the B-spline parameter is u = 0: the
// neighbours at offsets -1, 0, +1 weigh (1/6, 4/6, 1/6) and their derivative
// weights are (-1/2, 0, 1/2) / spacing, so one Jacobian needs the 27
// surrounding control points.
//
// Border rule: only interior nodes (1 .. controlPointDim - 2 on every axis)
// have a Jacobian; they are the nodes over the image (voxel 0 up to one
// spacing beyond the last voxel). Thread tid handles interior node
// (x + 1, y + 1, z + 1) with tid = (z * (controlPointDimY - 2) + y) *
// (controlPointDimX - 2) + x.
//
// Output per interior node: the matrix, row-major, 9 floats at 9 * tid:
// jacobianMatrices[9 * tid + 3 * r + c] = d(deformation_r) / d(x_c)
// (r, c = x, y, z), and its determinant.

extern "C" __global__ void __launch_bounds__(1024) bspline_jacobian_nodes(const float4* controlPointGrid, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, int jacobianNodeNumber, float* jacobianMatrices, float* jacobianDeterminants) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int nodeDimX;
    int nodeDimY;
    int controlPointIndex;
    float basis[3];
    float derivative[3];
    float weightX;
    float weightY;
    float weightZ;
    float jacobian[9];
    float determinant;
    float4 controlPoint;
    // gi stage: the threads' records pass through shared memory; the block moves them to and from global memory in consecutive elements
    extern __shared__ float4 gi_stage_area[];
    const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item
    float* gi_stage_jacobianMatrices = reinterpret_cast<float*>(gi_stage_area);  // 9 a thread
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < jacobianNodeNumber) {
        basis[0] = 1.0f / 6.0f;
        basis[1] = 4.0f / 6.0f;
        basis[2] = 1.0f / 6.0f;
        derivative[0] = -0.5f;
        derivative[1] = 0.0f;
        derivative[2] = 0.5f;
        nodeDimX = controlPointDimX - 2;
        nodeDimY = controlPointDimY - 2;
        index = tid;
        z = index / (nodeDimX * nodeDimY);
        index = index - z * nodeDimX * nodeDimY;
        y = index / nodeDimX;
        x = index - y * nodeDimX;
        x = x + 1;
        y = y + 1;
        z = z + 1;
        for (int i = 0; i < 9; i++) {
            jacobian[i] = 0.0f;
        }
        for (int c = 0; c < 3; c++) {
            for (int b = 0; b < 3; b++) {
                {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                    float gi_factor_63_0 = 0.0f;  // derivative[a] * controlPoint.x
                    float gi_factor_63_1 = 0.0f;  // basis[a] * controlPoint.x
                    float gi_factor_63_2 = 0.0f;  // derivative[a] * controlPoint.y
                    float gi_factor_63_3 = 0.0f;  // basis[a] * controlPoint.y
                    float gi_factor_63_4 = 0.0f;  // derivative[a] * controlPoint.z
                    float gi_factor_63_5 = 0.0f;  // basis[a] * controlPoint.z
                    for (int a = 0; a < 3; a++) {
                        controlPointIndex = ((z + c - 1) * controlPointDimY + y + b - 1) * controlPointDimX + x + a - 1;
                        controlPoint = controlPointGrid[controlPointIndex];
                        gi_factor_63_0 += derivative[a] * controlPoint.x;
                        gi_factor_63_1 += basis[a] * controlPoint.x;
                        // gi factor: jacobian[2] takes its sum from gi_factor_63_1
                        gi_factor_63_2 += derivative[a] * controlPoint.y;
                        gi_factor_63_3 += basis[a] * controlPoint.y;
                        // gi factor: jacobian[5] takes its sum from gi_factor_63_3
                        gi_factor_63_4 += derivative[a] * controlPoint.z;
                        gi_factor_63_5 += basis[a] * controlPoint.z;
                        // gi factor: jacobian[8] takes its sum from gi_factor_63_5
                    }
                    jacobian[0] += gi_factor_63_0 * (basis[b] * basis[c] / spacingX);
                    jacobian[1] += gi_factor_63_1 * (derivative[b] * basis[c] / spacingY);
                    jacobian[2] += gi_factor_63_1 * (basis[b] * derivative[c] / spacingZ);
                    jacobian[3] += gi_factor_63_2 * (basis[b] * basis[c] / spacingX);
                    jacobian[4] += gi_factor_63_3 * (derivative[b] * basis[c] / spacingY);
                    jacobian[5] += gi_factor_63_3 * (basis[b] * derivative[c] / spacingZ);
                    jacobian[6] += gi_factor_63_4 * (basis[b] * basis[c] / spacingX);
                    jacobian[7] += gi_factor_63_5 * (derivative[b] * basis[c] / spacingY);
                    jacobian[8] += gi_factor_63_5 * (basis[b] * derivative[c] / spacingZ);
                }
            }
        }
        jacobian[0] += 1.0f;
        jacobian[4] += 1.0f;
        jacobian[8] += 1.0f;
        determinant = jacobian[0] * (jacobian[4] * jacobian[8] - jacobian[5] * jacobian[7]);
        determinant -= jacobian[1] * (jacobian[3] * jacobian[8] - jacobian[5] * jacobian[6]);
        determinant += jacobian[2] * (jacobian[3] * jacobian[7] - jacobian[4] * jacobian[6]);
        for (int i = 0; i < 9; i++) {
            gi_stage_jacobianMatrices[(9 * tid + i) - 9 * gi_stage_first] = jacobian[i];
        }
        jacobianDeterminants[tid] = determinant;
    }
    __syncthreads();  // gi stage: every record of the block is in shared memory
    {
        long long gi_items = (long long)(jacobianNodeNumber) - gi_stage_first;  // the block's items below the guard's bound
        if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;
        for (int gi_j = threadIdx.x; gi_j < 9 * (int)gi_items; gi_j += blockDim.x)
            jacobianMatrices[9 * gi_stage_first + gi_j] = gi_stage_jacobianMatrices[gi_j];
    }
}
