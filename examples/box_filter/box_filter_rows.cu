// A plain CUDA kernel as a user might bring it to gi (README, "Evolve your
// own kernel"): a horizontal box filter over each row of a 2D float image,
// the borders clamped. One thread per output pixel, one row per block row.
__global__ void box_filter_rows(const float* in, float* out, int width, int height, int radius)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= width || y >= height)
        return;
    float sum = 0.0f;
    for (int dx = -radius; dx <= radius; ++dx) {
        int xx = min(max(x + dx, 0), width - 1);
        sum += in[y * width + xx];
    }
    out[y * width + x] = sum / (2 * radius + 1);
}
