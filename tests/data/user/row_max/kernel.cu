// The largest value of each row of a row-major matrix: one thread per row
// walks it with a while loop from a pointer to the row's start, keeping the
// larger value through a helper.
__device__ float larger(float a, float b) {
    return a > b ? a : b;
}

extern "C" __global__ void row_max(const float* matrix, int rows, int cols, float* maxima) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float* values = matrix + (long long)row * cols;
        float best = values[0];
        int column = 1;
        while (column < cols) {
            best = larger(best, values[column]);
            column++;
        }
        maxima[row] = best;
    }
}
