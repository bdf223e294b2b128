// Central difference along x of a volume read through a texture object over
// a 3-D CUDA array, as NiftyReg's image gradient reads its floating image:
// whole coordinates, point sampling, neighbours clamped to the edges.
__global__ void texture_gradient(cudaTextureObject_t image, float* gradient, int nx, int ny, int nz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  const int z = blockIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  const float right = tex3D<float>(image, min(x + 1, nx - 1), y, z);
  const float left = tex3D<float>(image, max(x - 1, 0), y, z);
  gradient[x + nx * (y + ny * z)] = 0.5f * (right - left);
}
