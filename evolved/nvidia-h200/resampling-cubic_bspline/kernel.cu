// Cubic B-spline resampling of the floating image through a deformation field.
//
// deformationField[i] is the position, in voxel coordinates of the floating
// image, that active reference voxel i (linear index activeVoxels[i]) maps to.
// The interpolated intensity is written to warpedImage[activeVoxels[i]];
// elements of warpedImage that belong to non-active voxels are not written
// (they keep whatever the caller put there).
//
// floatingCoefficients are the cubic B-spline coefficients of the floating
// image (prefiltered on the CPU, mirror boundaries), not its intensities, so
// the result interpolates the image: at a voxel centre it returns the voxel's
// value. The value at position p is the sum over the 4x4x4 coefficients
// floor(p) - 1 .. floor(p) + 2 of each axis, weighted by the cubic B-spline
// basis of u = p - floor(p):
//   (1-u)^3/6, (3u^3 - 6u^2 + 4)/6, (-3u^3 + 3u^2 + 3u + 1)/6, u^3/6.
//
// Padding: each of the 64 coefficients that lies outside the floating image
// contributes paddingValue instead, with its usual weight, so a position
// two voxels or more outside the image yields paddingValue (the weights sum
// to 1).

__device__ void cubic_bspline_weights(float u, float* weight) {
    float u2;
    float u3;
    float v;
    u2 = u * u;
    u3 = u2 * u;
    v = 1.0f - u;
    weight[0] = v * v * v / 6.0f;
    weight[1] = (3.0f * u3 - 6.0f * u2 + 4.0f) / 6.0f;
    weight[2] = (-3.0f * u3 + 3.0f * u2 + 3.0f * u + 1.0f) / 6.0f;
    weight[3] = u3 / 6.0f;
}

extern "C" __global__ void cubic_bspline_resample(const float* floatingCoefficients, int floatingDimX, int floatingDimY, int floatingDimZ, const float4* deformationField, const int* activeVoxels, int activeVoxelNumber, float paddingValue, float* warpedImage) {
    int tid;
    int index;
    int xPre;
    int yPre;
    int zPre;
    int X;
    int Y;
    int Z;
    float4 position;
    float xWeight[4];
    float yWeight[4];
    float zWeight[4];
    float coefficient;
    float value;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        position = deformationField[tid];
        xPre = (int)floorf(position.x);
        yPre = (int)floorf(position.y);
        zPre = (int)floorf(position.z);
        cubic_bspline_weights(position.x - (float)xPre, xWeight);
        cubic_bspline_weights(position.y - (float)yPre, yWeight);
        cubic_bspline_weights(position.z - (float)zPre, zWeight);
        value = 0.0f;
        for (int c = 0; c < 4; c++) {
            Z = zPre - 1 + c;
            for (int b = 0; b < 4; b++) {
                Y = yPre - 1 + b;
                {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                    float gi_factor_65_0 = 0.0f;  // xWeight[a] * coefficient
                    for (int a = 0; a < 4; a++) {
                        X = xPre - 1 + a;
                        if (X >= 0 && X < floatingDimX && Y >= 0 && Y < floatingDimY && Z >= 0 && Z < floatingDimZ) {
                            coefficient = __ldg(&floatingCoefficients[(Z * floatingDimY + Y) * floatingDimX + X]);
                        } else {
                            coefficient = paddingValue;
                        }
                        gi_factor_65_0 += xWeight[a] * coefficient;
                    }
                    value += gi_factor_65_0 * (yWeight[b] * zWeight[c]);
                }
            }
        }
        warpedImage[index] = value;
    }
}
