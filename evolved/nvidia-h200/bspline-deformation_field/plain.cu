// Cubic B-spline free-form deformation evaluated at every active voxel.
//
// Everything is in voxel space of the reference image. The control-point grid
// holds displacements (x, y, z; w unused); the output is the deformation, i.e.
// the voxel position plus the interpolated displacement (w = 0), written at
// the active voxel's number, not at its image index.
//
// Grid convention: control point (i, j, k) sits at voxel position
// ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ), i.e. the grid
// starts one spacing before the image origin. A voxel with grid coordinate
// g = x / spacingX and p = floor(g) is then influenced by control points
// p .. p + 3 in each direction, with weights from u = g - p. The grid must
// therefore have at least floor((imageDim - 1) / spacing) + 4 points per
// direction (ceil(imageDim / spacing) + 3 is always enough).

__device__ void bspline_basis(float u, float* basis) {
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
}

extern "C" __global__ void bspline_deformation_field(const float4* controlPointGrid, const int* activeVoxels, int activeVoxelNumber, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float4* deformationField) {
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
    float weight;
    float displacementX;
    float displacementY;
    float displacementZ;
    float4 controlPoint;
    float4 position;
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
        bspline_basis(gridX - (float)xPre, xBasis);
        bspline_basis(gridY - (float)yPre, yBasis);
        bspline_basis(gridZ - (float)zPre, zBasis);
        displacementX = 0.0f;
        displacementY = 0.0f;
        displacementZ = 0.0f;
        for (int c = 0; c < 4; c++) {
            for (int b = 0; b < 4; b++) {
                for (int a = 0; a < 4; a++) {
                    controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xPre + a;
                    controlPoint = controlPointGrid[controlPointIndex];
                    weight = xBasis[a] * yBasis[b] * zBasis[c];
                    displacementX += weight * controlPoint.x;
                    displacementY += weight * controlPoint.y;
                    displacementZ += weight * controlPoint.z;
                }
            }
        }
        position.x = (float)x + displacementX;
        position.y = (float)y + displacementY;
        position.z = (float)z + displacementZ;
        position.w = 0.0f;
        deformationField[tid] = position;
    }
}
