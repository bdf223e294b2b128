// y = gain * x + bias with the element count and the coefficients in one
// struct passed by value, as many host codes bundle a kernel's settings.
// Written for gi (11-29): a struct by value whose int member is the size
// the guard names (p.n is the workload variable p_n), its members mixing
// int, double and float with C's padding between them.
struct ScaleParams {
  int n;
  double bias;
  float gain;
};

__global__ void scale_params(const float* x, float* y, ScaleParams p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) y[i] = p.gain * x[i] + (float)p.bias;
}
