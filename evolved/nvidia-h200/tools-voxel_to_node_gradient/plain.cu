// Voxel-centric to node-centric gradient: the gradient of a voxel-wise
// similarity with respect to the B-spline control points.
//
// One thread per control point (node). The input is a voxel-based gradient
// field (x, y, z per voxel; w is never read). Node n receives the weighted sum
// of the gradient over the voxels in its support, each voxel weighted by the
// product of the cubic B-spline basis values with which the node influences
// that voxel in the deformation: this is the exact adjoint (transpose) of
// B-spline interpolation. The sum is NOT normalised (neither by the number of
// voxels nor by the sum of the weights): a caller that wants a normalised
// gradient scales it afterwards (the conjugate-gradient step normalises by
// the maximal length anyway). Output w is 0.
//
// Grid convention (as bspline_deformation_field): control point (i, j, k)
// sits at voxel ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ).
// A voxel x with xPre = floor(x / spacingX) is influenced by nodes
// xPre .. xPre + 3 with the basis values of u = x / spacingX - xPre, so node i
// receives the voxels with xPre in i - 3 .. i, i.e. x in
// [(i - 3) * spacingX, (i + 1) * spacingX). The loops below scan one voxel more
// on each side (clipped to the image) and skip the voxels whose xPre falls
// outside that range, so rounding of the float bounds cannot drop a voxel.

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

extern "C" __global__ void voxel_to_node_gradient(const float4* voxelGradient, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float4* nodeGradient) {
    int tid;
    int controlPointNumber;
    int i;
    int j;
    int k;
    int xFirst;
    int xLast;
    int yFirst;
    int yLast;
    int zFirst;
    int zLast;
    int xPre;
    int yPre;
    int zPre;
    int a;
    int b;
    int c;
    int voxelIndex;
    float gridX;
    float gridY;
    float gridZ;
    float xBasis[4];
    float yBasis[4];
    float zBasis[4];
    float weight;
    float sumX;
    float sumY;
    float sumZ;
    float4 gradient;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    controlPointNumber = controlPointDimX * controlPointDimY * controlPointDimZ;
    if (tid < controlPointNumber) {
        k = tid / (controlPointDimX * controlPointDimY);
        j = (tid / controlPointDimX) % controlPointDimY;
        i = tid % controlPointDimX;
        xFirst = (int)floorf((float)(i - 3) * spacingX) - 1;
        xLast = (int)ceilf((float)(i + 1) * spacingX) + 1;
        yFirst = (int)floorf((float)(j - 3) * spacingY) - 1;
        yLast = (int)ceilf((float)(j + 1) * spacingY) + 1;
        zFirst = (int)floorf((float)(k - 3) * spacingZ) - 1;
        zLast = (int)ceilf((float)(k + 1) * spacingZ) + 1;
        if (xFirst < 0) {
            xFirst = 0;
        }
        if (yFirst < 0) {
            yFirst = 0;
        }
        if (zFirst < 0) {
            zFirst = 0;
        }
        if (xLast > imageDimX - 1) {
            xLast = imageDimX - 1;
        }
        if (yLast > imageDimY - 1) {
            yLast = imageDimY - 1;
        }
        if (zLast > imageDimZ - 1) {
            zLast = imageDimZ - 1;
        }
        sumX = 0.0f;
        sumY = 0.0f;
        sumZ = 0.0f;
        for (int z = zFirst; z <= zLast; z++) {
            gridZ = (float)z / spacingZ;
            zPre = (int)floorf(gridZ);
            c = k - zPre;
            if (c >= 0 && c < 4) {
                bspline_basis(gridZ - (float)zPre, zBasis);
                for (int y = yFirst; y <= yLast; y++) {
                    gridY = (float)y / spacingY;
                    yPre = (int)floorf(gridY);
                    b = j - yPre;
                    if (b >= 0 && b < 4) {
                        bspline_basis(gridY - (float)yPre, yBasis);
                        for (int x = xFirst; x <= xLast; x++) {
                            gridX = (float)x / spacingX;
                            xPre = (int)floorf(gridX);
                            a = i - xPre;
                            if (a >= 0 && a < 4) {
                                bspline_basis(gridX - (float)xPre, xBasis);
                                weight = xBasis[a] * yBasis[b] * zBasis[c];
                                voxelIndex = (z * imageDimY + y) * imageDimX + x;
                                gradient = voxelGradient[voxelIndex];
                                sumX += weight * gradient.x;
                                sumY += weight * gradient.y;
                                sumZ += weight * gradient.z;
                            }
                        }
                    }
                }
            }
        }
        result.x = sumX;
        result.y = sumY;
        result.z = sumZ;
        result.w = 0.0f;
        nodeGradient[tid] = result;
    }
}
