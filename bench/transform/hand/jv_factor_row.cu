// Exact Jacobian determinant of a cubic B-spline free-form deformation at
// every active voxel.
//
// Voxel space, grid convention of bspline_deformation_field: control point
// (i, j, k) sits at voxel ((i - 1) * spacingX, (j - 1) * spacingY,
// (k - 1) * spacingZ) and holds a displacement (x, y, z; w unused). A voxel
// with grid coordinate g = x / spacingX and p = floor(g) is influenced by
// control points p .. p + 3 in each direction, with weights from u = g - p.
// The deformation is identity + displacement, so its Jacobian is
// J = I + d(displacement)/dx: column c of d(displacement)/dx sums the 64
// control points weighted by the basis values on two axes and the basis
// derivative (d/du, divided by the spacing) on axis c.
//
// Output: det J per active voxel, at the voxel's active number.

__device__ void bspline_basis_derivative(float u, float* basis, float* derivative) {
    float u2;
    float u3;
    float v;
    u2 = u * u;
    u3 = u2 * u;
    v = 1.0f - u;
    basis[0] = v * v * v / 6.0f;
    basis[1] = (3.0f * u3 - 6.0f * u2 + 4.0f) / 6.0f;
    basis[2] = (-3.0f * u3 + 3.0f * u2 + 3.0f * u + 1.0f) / 6.0f;
    basis[3] = u3 / 6.0f;
    derivative[0] = -0.5f * v * v;
    derivative[1] = 1.5f * u2 - 2.0f * u;
    derivative[2] = -1.5f * u2 + u + 0.5f;
    derivative[3] = 0.5f * u2;
}

extern "C" __global__ void bspline_jacobian_voxels(const float4* controlPointGrid, const int* activeVoxels, int activeVoxelNumber, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float* jacobianDeterminants) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int xPre;
    int yPre;
    int zPre;
    int controlPointIndex;
    float gridX;
    float gridY;
    float gridZ;
    float xBasis[4];
    float yBasis[4];
    float zBasis[4];
    float xDerivative[4];
    float yDerivative[4];
    float zDerivative[4];
    float weightX;
    float weightY;
    float weightZ;
    float jacobian[9];
    float determinant;
    float4 controlPoint;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        z = index / (imageDimX * imageDimY);
        index = index - z * imageDimX * imageDimY;
        y = index / imageDimX;
        x = index - y * imageDimX;
        gridX = (float)x / spacingX;
        gridY = (float)y / spacingY;
        gridZ = (float)z / spacingZ;
        xPre = (int)floorf(gridX);
        yPre = (int)floorf(gridY);
        zPre = (int)floorf(gridZ);
        bspline_basis_derivative(gridX - (float)xPre, xBasis, xDerivative);
        bspline_basis_derivative(gridY - (float)yPre, yBasis, yDerivative);
        bspline_basis_derivative(gridZ - (float)zPre, zBasis, zDerivative);
        for (int i = 0; i < 9; i++) {
            jacobian[i] = 0.0f;
        }
        // Separable sums: the x sums of a row of four control points first,
        // then weighted by the y and z factors once per row.
        for (int c = 0; c < 4; c++) {
            for (int b = 0; b < 4; b++) {
                float4 sumBasis = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                float4 sumDerivative = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                for (int a = 0; a < 4; a++) {
                    controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xPre + a;
                    controlPoint = controlPointGrid[controlPointIndex];
                    sumBasis.x += xBasis[a] * controlPoint.x;
                    sumBasis.y += xBasis[a] * controlPoint.y;
                    sumBasis.z += xBasis[a] * controlPoint.z;
                    sumDerivative.x += xDerivative[a] * controlPoint.x;
                    sumDerivative.y += xDerivative[a] * controlPoint.y;
                    sumDerivative.z += xDerivative[a] * controlPoint.z;
                }
                weightX = yBasis[b] * zBasis[c];
                weightY = yDerivative[b] * zBasis[c];
                weightZ = yBasis[b] * zDerivative[c];
                jacobian[0] += weightX * sumDerivative.x;
                jacobian[1] += weightY * sumBasis.x;
                jacobian[2] += weightZ * sumBasis.x;
                jacobian[3] += weightX * sumDerivative.y;
                jacobian[4] += weightY * sumBasis.y;
                jacobian[5] += weightZ * sumBasis.y;
                jacobian[6] += weightX * sumDerivative.z;
                jacobian[7] += weightY * sumBasis.z;
                jacobian[8] += weightZ * sumBasis.z;
            }
        }
        jacobian[0] = 1.0f + jacobian[0] / spacingX;
        jacobian[1] = jacobian[1] / spacingY;
        jacobian[2] = jacobian[2] / spacingZ;
        jacobian[3] = jacobian[3] / spacingX;
        jacobian[4] = 1.0f + jacobian[4] / spacingY;
        jacobian[5] = jacobian[5] / spacingZ;
        jacobian[6] = jacobian[6] / spacingX;
        jacobian[7] = jacobian[7] / spacingY;
        jacobian[8] = 1.0f + jacobian[8] / spacingZ;
        determinant = jacobian[0] * (jacobian[4] * jacobian[8] - jacobian[5] * jacobian[7]);
        determinant -= jacobian[1] * (jacobian[3] * jacobian[8] - jacobian[5] * jacobian[6]);
        determinant += jacobian[2] * (jacobian[3] * jacobian[7] - jacobian[4] * jacobian[6]);
        jacobianDeterminants[tid] = determinant;
    }
}
