// Displacement field to deformation field: adds each voxel's own position.
//
// One thread per voxel of the reference image (x fastest: index = (z *
// imageDimY + y) * imageDimX + x). Both fields are in voxel space; the
// displacement's w is not read and the deformation's w is set to 0.

extern "C" __global__ void displacement_to_deformation(const float4* displacementField, int imageDimX, int imageDimY, int imageDimZ, float4* deformationField) {
    int tid;
    int voxelNumber;
    int x;
    int y;
    int z;
    float4 displacement;
    float4 position;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    voxelNumber = imageDimX * imageDimY * imageDimZ;
    if (tid < voxelNumber) {
        x = tid % imageDimX;
        y = (tid / imageDimX) % imageDimY;
        z = tid / (imageDimX * imageDimY);
        displacement = displacementField[tid];
        position.x = (float)x + displacement.x;
        position.y = (float)y + displacement.y;
        position.z = (float)z + displacement.z;
        position.w = 0.0f;
        deformationField[tid] = position;
    }
}
