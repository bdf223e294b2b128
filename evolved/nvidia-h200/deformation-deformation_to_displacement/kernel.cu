// Deformation field to displacement field: subtracts each voxel's own position.
//
// One thread per voxel of the reference image (x fastest: index = (z *
// imageDimY + y) * imageDimX + x). Both fields are in voxel space; the
// deformation's w is not read and the displacement's w is set to 0.

extern "C" __global__ void deformation_to_displacement(const float4* deformationField, int imageDimX, int imageDimY, int imageDimZ, float4* displacementField) {
    int tid;
    int voxelNumber;
    int x;
    int y;
    int z;
    float4 position;
    float4 displacement;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    voxelNumber = imageDimX * imageDimY * imageDimZ;
    if (tid < voxelNumber) {
        x = tid % imageDimX;
        y = (tid / imageDimX) % imageDimY;
        z = tid / (imageDimX * imageDimY);
        position = deformationField[tid];
        displacement.x = position.x - (float)x;
        displacement.y = position.y - (float)y;
        displacement.z = position.z - (float)z;
        displacement.w = 0.0f;
        displacementField[tid] = displacement;
    }
}
