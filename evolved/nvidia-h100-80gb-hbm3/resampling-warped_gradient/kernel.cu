// Spatial gradient of the warped image: at each active voxel, the analytic
// gradient of the trilinear interpolant of the floating image at the position
// that voxel maps to.
//
// deformationField[i] is the position, in voxel coordinates of the floating
// image, that active reference voxel i (linear index activeVoxels[i]) maps to.
// The gradient (d/dx, d/dy, d/dz, 0), per voxel of the floating image along
// its axes, is written to warpedGradient[activeVoxels[i]]; elements that
// belong to non-active voxels are not written.
//
// With p = floor(position) and u = position - p per axis, the interpolant in
// the cell p .. p + 1 is the sum over its 8 corners of
// wx * wy * wz * intensity, with weights (1 - u, u); its derivative along x
// replaces wx by (-1, +1), and likewise along y and z.
//
// Outside the image: the gradient is zero unless all 8 corners of the cell
// lie inside the floating image, i.e. unless 0 <= position < dim - 1 along
// every axis (no padding value takes part).

extern "C" __global__ void warped_image_gradient(const float* floatingImage, int floatingDimX, int floatingDimY, int floatingDimZ, const float4* deformationField, const int* activeVoxels, int activeVoxelNumber, float4* warpedGradient) {
    int tid;
    int index;
    int xPre;
    int yPre;
    int zPre;
    float4 position;
    float relX;
    float relY;
    float relZ;
    float xWeight[2];
    float yWeight[2];
    float zWeight[2];
    float xDeriv[2];
    float yDeriv[2];
    float zDeriv[2];
    float intensity;
    float gradX;
    float gradY;
    float gradZ;
    float4 gradient;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        position = deformationField[tid];
        xPre = (int)floorf(position.x);
        yPre = (int)floorf(position.y);
        zPre = (int)floorf(position.z);
        relX = position.x - (float)xPre;
        relY = position.y - (float)yPre;
        relZ = position.z - (float)zPre;
        xWeight[0] = 1.0f - relX;
        xWeight[1] = relX;
        yWeight[0] = 1.0f - relY;
        yWeight[1] = relY;
        zWeight[0] = 1.0f - relZ;
        zWeight[1] = relZ;
        xDeriv[0] = -1.0f;
        xDeriv[1] = 1.0f;
        yDeriv[0] = -1.0f;
        yDeriv[1] = 1.0f;
        zDeriv[0] = -1.0f;
        zDeriv[1] = 1.0f;
        gradX = 0.0f;
        gradY = 0.0f;
        gradZ = 0.0f;
        if (xPre >= 0 && xPre + 1 < floatingDimX && yPre >= 0 && yPre + 1 < floatingDimY && zPre >= 0 && zPre + 1 < floatingDimZ) {
            for (int c = 0; c < 2; c++) {
                for (int b = 0; b < 2; b++) {
                    for (int a = 0; a < 2; a++) {
                        intensity = floatingImage[((zPre + c) * floatingDimY + yPre + b) * floatingDimX + xPre + a];
                        gradX += xDeriv[a] * yWeight[b] * zWeight[c] * intensity;
                        gradY += xWeight[a] * yDeriv[b] * zWeight[c] * intensity;
                        gradZ += xWeight[a] * yWeight[b] * zDeriv[c] * intensity;
                    }
                }
            }
        }
        gradient.x = gradX;
        gradient.y = gradY;
        gradient.z = gradZ;
        gradient.w = 0.0f;
        warpedGradient[index] = gradient;
    }
}
