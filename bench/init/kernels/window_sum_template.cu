// Each output the sum of a window of WIDTH consecutive inputs, the window
// width a template argument; the file instantiates nothing (its host code
// would), so gi init is told which instance: --entry 'window_sum_template<double, 5>'.
template <typename T, int WIDTH>
__global__ void window_sum_template(const T* in, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T total = 0;
    for (int k = 0; k < WIDTH; ++k) total += in[i + k];
    out[i] = total;
}
