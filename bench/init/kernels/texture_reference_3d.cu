// A legacy 3-D texture reference (removed in CUDA 12), read with tex3D at
// voxel centres: gi init ports it to a texture object parameter.
texture<float, 3, cudaReadModeElementType> volumeTexture;

__global__ void texture_reference_3d(float* out, float scale, int nx, int ny, int nz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  const int z = blockIdx.z;
  if (x < nx && y < ny && z < nz)
    out[x + nx * (y + ny * z)] = scale * tex3D(volumeTexture, x + 0.5f, y + 0.5f, z + 0.5f);
}
