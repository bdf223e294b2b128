// Gradient of the exact (voxel-wise) log-Jacobian penalty of a cubic B-spline
// free-form deformation with respect to every control point.
//
// Penalty: sum over the active voxels v of (ln det J_v)^2, J_v the exact
// Jacobian at the voxel (bspline_jacobian_voxels). Its derivative with
// respect to J_v is the per-voxel term T_v = 2 ln(det J_v) J_v^{-T} (zero for
// a folded voxel, det <= 0, whose penalty is a constant), computed by an
// earlier step: voxelTerms[9 * t + 3 * r + c] for the voxel with active
// number t, row-major. voxelToActive maps every image voxel to its active
// number, or -1 when it is not active.
//
// Voxel space, grid convention of bspline_deformation_field: control point
// (i, j, k) sits at voxel ((i - 1) * spacingX, ...); voxel x with
// p = floor(x / spacingX) is influenced by control points p .. p + 3 with
// weights from u = x / spacingX - p. Control point m = p + a receives from
// the voxel T_v w, w = (dB_a(u) B_b(v) B_c(w) / spacingX,
// B_a dB_b / spacingY B_c, B_a B_b dB_c / spacingZ) (B the cubic B-spline
// basis, dB its derivative d/du).
//
// A plain gather: one thread per control point visits the voxels in its
// support (p from m - 3 to m on every axis: about (4 spacing)^3 voxels),
// skips the inactive ones and sums in order, so the result is deterministic.
// Output float4 (x, y, z, w = 0) per control point.

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

extern "C" __global__ void bspline_log_jacobian_gradient_exact(const float* voxelTerms, const int* voxelToActive, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, int controlPointNumber, float4* gradient) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int firstX;
    int firstY;
    int firstZ;
    int lastX;
    int lastY;
    int lastZ;
    int xPre;
    int yPre;
    int zPre;
    int offsetX;
    int offsetY;
    int offsetZ;
    int activeIndex;
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
    float gradientX;
    float gradientY;
    float gradientZ;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        index = tid;
        z = index / (controlPointDimX * controlPointDimY);
        index = index - z * controlPointDimX * controlPointDimY;
        y = index / controlPointDimX;
        x = index - y * controlPointDimX;
        firstX = (int)floorf((float)(x - 3) * spacingX);
        firstY = (int)floorf((float)(y - 3) * spacingY);
        firstZ = (int)floorf((float)(z - 3) * spacingZ);
        lastX = (int)ceilf((float)(x + 1) * spacingX);
        lastY = (int)ceilf((float)(y + 1) * spacingY);
        lastZ = (int)ceilf((float)(z + 1) * spacingZ);
        if (firstX < 0) {
            firstX = 0;
        }
        if (firstY < 0) {
            firstY = 0;
        }
        if (firstZ < 0) {
            firstZ = 0;
        }
        if (lastX > imageDimX - 1) {
            lastX = imageDimX - 1;
        }
        if (lastY > imageDimY - 1) {
            lastY = imageDimY - 1;
        }
        if (lastZ > imageDimZ - 1) {
            lastZ = imageDimZ - 1;
        }
        gradientX = 0.0f;
        gradientY = 0.0f;
        gradientZ = 0.0f;
        for (int vz = firstZ; vz <= lastZ; vz++) {
            gridZ = (float)vz / spacingZ;
            zPre = (int)floorf(gridZ);
            offsetZ = z - zPre;
            if (offsetZ >= 0 && offsetZ <= 3) {
                bspline_basis_derivative(gridZ - (float)zPre, zBasis, zDerivative);
                for (int vy = firstY; vy <= lastY; vy++) {
                    gridY = (float)vy / spacingY;
                    yPre = (int)floorf(gridY);
                    offsetY = y - yPre;
                    if (offsetY >= 0 && offsetY <= 3) {
                        bspline_basis_derivative(gridY - (float)yPre, yBasis, yDerivative);
                        for (int vx = firstX; vx <= lastX; vx++) {
                            gridX = (float)vx / spacingX;
                            xPre = (int)floorf(gridX);
                            offsetX = x - xPre;
                            activeIndex = voxelToActive[(vz * imageDimY + vy) * imageDimX + vx];
                            if (offsetX >= 0 && offsetX <= 3 && activeIndex >= 0) {
                                bspline_basis_derivative(gridX - (float)xPre, xBasis, xDerivative);
                                weightX = xDerivative[offsetX] * yBasis[offsetY] * zBasis[offsetZ] / spacingX;
                                weightY = xBasis[offsetX] * yDerivative[offsetY] * zBasis[offsetZ] / spacingY;
                                weightZ = xBasis[offsetX] * yBasis[offsetY] * zDerivative[offsetZ] / spacingZ;
                                gradientX += voxelTerms[9 * activeIndex + 0] * weightX + voxelTerms[9 * activeIndex + 1] * weightY + voxelTerms[9 * activeIndex + 2] * weightZ;
                                gradientY += voxelTerms[9 * activeIndex + 3] * weightX + voxelTerms[9 * activeIndex + 4] * weightY + voxelTerms[9 * activeIndex + 5] * weightZ;
                                gradientZ += voxelTerms[9 * activeIndex + 6] * weightX + voxelTerms[9 * activeIndex + 7] * weightY + voxelTerms[9 * activeIndex + 8] * weightZ;
                            }
                        }
                    }
                }
            }
        }
        result.x = gradientX;
        result.y = gradientY;
        result.z = gradientZ;
        result.w = 0.0f;
        gradient[tid] = result;
    }
}
