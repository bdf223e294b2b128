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

extern "C" __global__ void bspline_jacobian_voxels(const float4* controlPointGrid, const int* activeVoxels, int activeVoxelNumber, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float* __restrict__ jacobianDeterminants) {
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
    const int gi_first = (blockIdx.x * blockDim.x + threadIdx.x) * 2;  // gi coarsen: this thread's first item
    int gi_vec_activeVoxels[2];  // gi coarsen: 'activeVoxels' read as int2
    if (gi_first + 2 <= (activeVoxelNumber) && ((unsigned long long)(activeVoxels + gi_first) & 7ull) == 0ull) {
        #pragma unroll
        for (int gi_v = 0; gi_v < 2; gi_v += 2) {
            const int2 gi_w = *reinterpret_cast<const int2*>(activeVoxels + gi_first + gi_v);
            gi_vec_activeVoxels[gi_v] = gi_w.x; gi_vec_activeVoxels[gi_v + 1] = gi_w.y;
        }
    } else {
        for (int gi_v = 0; gi_v < 2; gi_v++)
            if (gi_first + gi_v < (activeVoxelNumber)) gi_vec_activeVoxels[gi_v] = activeVoxels[gi_first + gi_v];
    }
    #pragma unroll
    for (int gi_item = 0; gi_item < 2; gi_item++) {
        tid = (blockIdx.x * blockDim.x + threadIdx.x) * 2 + gi_item;
        if (tid < activeVoxelNumber) {
            index = gi_vec_activeVoxels[gi_item];
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
            for (int c = 0; c < 4; c++) {
                for (int b = 0; b < 4; b++) {
                    {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                        float gi_factor_79_0 = 0.0f;  // xDerivative[a] * controlPoint.x
                        float gi_factor_79_1 = 0.0f;  // xBasis[a] * controlPoint.x
                        float gi_factor_79_2 = 0.0f;  // xDerivative[a] * controlPoint.y
                        float gi_factor_79_3 = 0.0f;  // xBasis[a] * controlPoint.y
                        float gi_factor_79_4 = 0.0f;  // xDerivative[a] * controlPoint.z
                        float gi_factor_79_5 = 0.0f;  // xBasis[a] * controlPoint.z
                        for (int a = 0; a < 4; a++) {
                            controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xPre + a;
                            controlPoint = controlPointGrid[controlPointIndex];
                            gi_factor_79_0 += xDerivative[a] * controlPoint.x;
                            gi_factor_79_1 += xBasis[a] * controlPoint.x;
                            // gi factor: jacobian[2] takes its sum from gi_factor_79_1
                            gi_factor_79_2 += xDerivative[a] * controlPoint.y;
                            gi_factor_79_3 += xBasis[a] * controlPoint.y;
                            // gi factor: jacobian[5] takes its sum from gi_factor_79_3
                            gi_factor_79_4 += xDerivative[a] * controlPoint.z;
                            gi_factor_79_5 += xBasis[a] * controlPoint.z;
                            // gi factor: jacobian[8] takes its sum from gi_factor_79_5
                        }
                        jacobian[0] += gi_factor_79_0 * (yBasis[b] * zBasis[c]);
                        jacobian[1] += gi_factor_79_1 * (yDerivative[b] * zBasis[c]);
                        jacobian[2] += gi_factor_79_1 * (yBasis[b] * zDerivative[c]);
                        jacobian[3] += gi_factor_79_2 * (yBasis[b] * zBasis[c]);
                        jacobian[4] += gi_factor_79_3 * (yDerivative[b] * zBasis[c]);
                        jacobian[5] += gi_factor_79_3 * (yBasis[b] * zDerivative[c]);
                        jacobian[6] += gi_factor_79_4 * (yBasis[b] * zBasis[c]);
                        jacobian[7] += gi_factor_79_5 * (yDerivative[b] * zBasis[c]);
                        jacobian[8] += gi_factor_79_5 * (yBasis[b] * zDerivative[c]);
                    }
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
}
