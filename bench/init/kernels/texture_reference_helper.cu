// A legacy 1-D texture reference read in a __device__ helper, as NiftyReg's
// older kernels read theirs: gi init gives the helper the texture object as
// a parameter, and the kernel passes it on.
texture<float, 1, cudaReadModeElementType> weightTexture;

__device__ float weight_at(int i) {
  return tex1Dfetch(weightTexture, i);
}

__global__ void texture_reference_helper(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * weight_at(i);
}
