// Trilinear resampling of the floating image through a deformation field.
//
// deformationField[i] is the position, in voxel coordinates of the floating
// image, that active reference voxel i (linear index activeVoxels[i]) maps to.
// The interpolated intensity is written to warpedImage[activeVoxels[i]];
// elements of warpedImage that belong to non-active voxels are not written
// (they keep whatever the caller put there).
//
// Padding: each of the 8 corners that lies outside the floating image
// contributes paddingValue instead of an intensity, with its usual trilinear
// weight, so a position far outside the image yields exactly paddingValue.

extern "C" __global__ void trilinear_resample(const float* floatingImage, int floatingDimX, int floatingDimY, int floatingDimZ, const float4* deformationField, const int* activeVoxels, int activeVoxelNumber, float paddingValue, float* warpedImage) {
    int tid;
    int index;
    int xPre;
    int yPre;
    int zPre;
    int X;
    int Y;
    int Z;
    float4 position;
    float relX;
    float relY;
    float relZ;
    float xWeight[2];
    float yWeight[2];
    float zWeight[2];
    float intensity;
    float value;
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
        value = 0.0f;
        for (int c = 0; c < 2; c++) {
            Z = zPre + c;
            for (int b = 0; b < 2; b++) {
                Y = yPre + b;
                for (int a = 0; a < 2; a++) {
                    X = xPre + a;
                    if (X >= 0 && X < floatingDimX && Y >= 0 && Y < floatingDimY && Z >= 0 && Z < floatingDimZ) {
                        intensity = floatingImage[(Z * floatingDimY + Y) * floatingDimX + X];
                    } else {
                        intensity = paddingValue;
                    }
                    value += xWeight[a] * yWeight[b] * zWeight[c] * intensity;
                }
            }
        }
        warpedImage[index] = value;
    }
}
