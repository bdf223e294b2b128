// Affine deformation field: where an affine transformation maps every active
// voxel of the reference image.
//
// Everything is in voxel space. transformationMatrix holds the first three
// rows of the homogeneous 4x4 matrix, row by row (12 floats):
//   x' = m[0] x + m[1] y + m[2] z + m[3]
//   y' = m[4] x + m[5] y + m[6] z + m[7]
//   z' = m[8] x + m[9] y + m[10] z + m[11]
// Active voxel i has linear index activeVoxels[i] = (z * imageDimY + y) *
// imageDimX + x; its position (x', y', z', w = 0) is written at the active
// voxel's number i, not at its image index.

extern "C" __global__ void affine_deformation_field(const float* transformationMatrix, const int* activeVoxels, int activeVoxelNumber, int imageDimX, int imageDimY, float4* deformationField) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    float voxelX;
    float voxelY;
    float voxelZ;
    float4 position;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        z = index / (imageDimX * imageDimY);
        index = index - z * imageDimX * imageDimY;
        y = index / imageDimX;
        x = index - y * imageDimX;
        voxelX = (float)x;
        voxelY = (float)y;
        voxelZ = (float)z;
        position.x = transformationMatrix[0] * voxelX + transformationMatrix[1] * voxelY + transformationMatrix[2] * voxelZ + transformationMatrix[3];
        position.y = transformationMatrix[4] * voxelX + transformationMatrix[5] * voxelY + transformationMatrix[6] * voxelZ + transformationMatrix[7];
        position.z = transformationMatrix[8] * voxelX + transformationMatrix[9] * voxelY + transformationMatrix[10] * voxelZ + transformationMatrix[11];
        position.w = 0.0f;
        deformationField[tid] = position;
    }
}
