// A legacy 2-D texture reference passed whole to a template helper from a
// header (include/bilinear_taps.cuh): gi init passes texture<float, 2>(object),
// which its texture_references.cuh defines; the CUDA array's extent is given
// with --size image=W,H, as the kernel does not say it.
#include <bilinear_taps.cuh>

texture<float, 2, cudaReadModeElementType> image;

__global__ void texture_reference_template(float* out, int width, int height, float scale) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x < width && y < height) out[y * width + x] = four_taps(image, x * scale, y * scale);
}
