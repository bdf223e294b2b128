// Each element of a row-major matrix scaled by its row's weight, plus its
// column's bias: out[i][j] = in[i][j] * row_weight[i] + column_bias[j], with
// the row i from the x thread index as one writes a[i][j]. The threads of a
// warp then sit a row apart, so each of their loads and stores touches a
// cache line of its own.
extern "C" __global__ void scale_rows(const float* in, const float* row_weight, const float* column_bias,
                                      int rows, int cols, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows && j < cols) {
        const int at = i * cols + j;
        out[at] = in[at] * row_weight[i] + column_bias[j];
    }
}
