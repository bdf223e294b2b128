// Composition of two deformation fields: composedField(v) = B(A(v)).
//
// One thread per voxel v of the reference image (x fastest). Both fields are
// dense, in voxel space, on the same image grid: A = innerField is applied
// first; B = outerField is sampled at the position p = A(v).
//
// Sampling rule: B(p) = p + D(p), where D is the trilinear interpolation of
// B's displacement B(u) - u over the 8 voxels u around p, each corner index
// clamped into the image. Inside the image this is exactly the trilinear
// interpolation of B; outside, the displacement at the nearest border is
// carried on unchanged (constant extrapolation of the displacement, i.e.
// B continues with unit slope beyond the border). The output w is 0.

extern "C" __global__ void deformation_compose(const float4* innerField, const float4* outerField, int imageDimX, int imageDimY, int imageDimZ, float4* composedField) {
    int tid;
    int voxelNumber;
    int xPre;
    int yPre;
    int zPre;
    int X;
    int Y;
    int Z;
    float4 position;
    float4 node;
    float relX;
    float relY;
    float relZ;
    float xWeight[2];
    float yWeight[2];
    float zWeight[2];
    float weight;
    float displacementX;
    float displacementY;
    float displacementZ;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    voxelNumber = imageDimX * imageDimY * imageDimZ;
    if (tid < voxelNumber) {
        position = innerField[tid];
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
        displacementX = 0.0f;
        displacementY = 0.0f;
        displacementZ = 0.0f;
        for (int c = 0; c < 2; c++) {
            Z = zPre + c;
            if (Z < 0) {
                yWeight[1] = relY;
                Z = 0;
            }
            if (Z > imageDimZ - 1) {
                Z = imageDimZ - 1;
            }
            for (int b = 0; b < 2; b++) {
                Y = yPre + b;
                if (Y < 0) {
                    Y = 0;
                }
                if (Y > imageDimY - 1) {
                    Y = imageDimY - 1;
                }
                {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                    float gi_factor_71_0 = 0.0f;  // xWeight[a] * ((node.x - (float) X))
                    float gi_factor_71_1 = 0.0f;  // xWeight[a] * ((node.y - (float) Y))
                    float gi_factor_71_2 = 0.0f;  // xWeight[a] * ((node.z - (float) Z))
                    for (int a = 0; a < 2; a++) {
                        X = xPre + a;
                        if (X < 0) {
                            X = 0;
                        }
                        if (X > imageDimX - 1) {
                            X = imageDimX - 1;
                        }
                        node = outerField[(Z * imageDimY + Y) * imageDimX + X];
                        gi_factor_71_0 += xWeight[a] * ((node.x - (float) X));
                        gi_factor_71_1 += xWeight[a] * ((node.y - (float) Y));
                        gi_factor_71_2 += xWeight[a] * ((node.z - (float) Z));
                    }
                    displacementX += gi_factor_71_0 * (yWeight[b] * zWeight[c]);
                    displacementY += gi_factor_71_1 * (yWeight[b] * zWeight[c]);
                    displacementZ += gi_factor_71_2 * (yWeight[b] * zWeight[c]);
                }
            }
        }
        result.x = position.x + displacementX;
        result.y = position.y + displacementY;
        result.z = position.z + displacementZ;
        result.w = 0.0f;
        composedField[tid] = result;
    }
}
