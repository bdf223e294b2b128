// Log-Jacobian penalty of a cubic B-spline free-form deformation at the
// control-point nodes: (ln det J)^2 per node, J the approximate Jacobian.
//
// Voxel space, grid convention of bspline_deformation_field: control point
// (i, j, k) sits at voxel ((i - 1) * spacingX, (j - 1) * spacingY,
// (k - 1) * spacingZ) and holds a displacement (x, y, z; w unused); the
// deformation is identity + displacement, so J = I + d(displacement)/dx. At a
// node the B-spline parameter is u = 0: the neighbours at offsets -1, 0, +1
// weigh (1/6, 4/6, 1/6) and their derivative weights are (-1/2, 0, 1/2) /
// spacing (27 control points per node), as in bspline_jacobian_nodes.
//
// Border rule: only interior nodes (1 .. controlPointDim - 2 on every axis),
// numbered tid = (z * (controlPointDimY - 2) + y) * (controlPointDimX - 2) + x
// for node (x + 1, y + 1, z + 1).
//
// Folds: where det J <= 0 the logarithm does not exist; such a node gets the
// constant penalty 1000 (larger than (ln det)^2 for any det in [2e-14, 5e13]),
// so a folded transformation always costs more than an unfolded one.

extern "C" __global__ void bspline_log_jacobian_penalty(const float4* controlPointGrid, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, int jacobianNodeNumber, float* penalty) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int nodeDimX;
    int nodeDimY;
    int controlPointIndex;
    // gi registers: basis is read below with literal indices only (a select per element), so it stays in registers
    float basis[3];
    // gi registers: derivative is read below with literal indices only (a select per element), so it stays in registers
    float derivative[3];
    float weightX;
    float weightY;
    float weightZ;
    float jacobian[9];
    float determinant;
    float logDeterminant;
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
                    weightX = (a == 0 ? derivative[0] : (a == 1 ? derivative[1] : derivative[2])) * (b == 0 ? basis[0] : (b == 1 ? basis[1] : basis[2])) * (c == 0 ? basis[0] : (c == 1 ? basis[1] : basis[2])) / spacingX;
                    weightY = (a == 0 ? basis[0] : (a == 1 ? basis[1] : basis[2])) * (b == 0 ? derivative[0] : (b == 1 ? derivative[1] : derivative[2])) * (c == 0 ? basis[0] : (c == 1 ? basis[1] : basis[2])) / spacingY;
                    weightZ = (a == 0 ? basis[0] : (a == 1 ? basis[1] : basis[2])) * (b == 0 ? basis[0] : (b == 1 ? basis[1] : basis[2])) * (c == 0 ? derivative[0] : (c == 1 ? derivative[1] : derivative[2])) / spacingZ;
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
        if (determinant > 0.0f) {
            logDeterminant = logf(determinant);
            penalty[tid] = logDeterminant * logDeterminant;
        } else {
            penalty[tid] = 1000.0f;
        }
    }
}
