// The sum of each row of a row-major matrix: one thread per row walks its
// row. Neighbouring threads read addresses a row apart, so every load of a
// warp touches another cache line.
extern "C" __global__ void row_sum(const float* matrix, int rows, int cols, float* sums) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float sum = 0.0f;
    for (int column = 0; column < cols; column++) {
        sum += matrix[row * cols + column];
    }
    sums[row] = sum;
}
