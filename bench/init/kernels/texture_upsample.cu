// Doubles an image's resolution with the texture unit's bilinear filter:
// output pixel (x, y) reads the input at ((x + 0.5) / 2, (y + 0.5) / 2) in
// texel units, a float coordinate.
__global__ void texture_upsample(cudaTextureObject_t image, float* out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= 2 * width || y >= 2 * height) return;
  const float u = (x + 0.5f) / 2.0f;
  const float v = (y + 0.5f) / 2.0f;
  out[x + 2 * width * y] = tex2D<float>(image, u, v);
}
