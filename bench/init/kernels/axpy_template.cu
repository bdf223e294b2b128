// y = a * x + y over any element type, instantiated for float below as a
// library's source file would be.
template <typename Real>
__global__ void axpy_template(Real a, const Real* x, Real* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template __global__ void axpy_template<float>(float, const float*, float*, int);
