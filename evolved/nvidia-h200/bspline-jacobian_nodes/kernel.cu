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

extern "C" __global__ void bspline_jacobian_nodes(const float4* controlPointGrid, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, int jacobianNodeNumber, float* jacobianMatrices, float* jacobianDeterminants) {
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
                for (int a = 0; a < 3; a++) {
                    controlPointIndex = ((z + c - 1) * controlPointDimY + y + b - 1) * controlPointDimX + x + a - 1;
                    controlPoint = controlPointGrid[controlPointIndex];
                    weightX = derivative[a] * basis[b] * basis[c] / spacingX;
                    weightY = basis[a] * derivative[b] * basis[c] / spacingY;
                    weightZ = basis[a] * basis[b] * derivative[c] / spacingZ;
                    jacobian[0] += weightX * controlPoint.x;
                    jacobian[1] += weightY * controlPoint.x;
                    jacobian[2] += weightZ * controlPoint.x;
                    jacobian[3] += weightX * controlPoint.y;
                    jacobian[4] += weightY * controlPoint.y;
                    jacobian[5] += weightZ * controlPoint.y;
                    jacobian[6] += weightX * controlPoint.z;
                    jacobian[7] += weightY * controlPoint.z;
                    jacobian[8] += weightZ * controlPoint.z;
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
            jacobianMatrices[9 * tid + i] = jacobian[i];
        }
        jacobianDeterminants[tid] = determinant;
    }
}
