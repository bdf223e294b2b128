// Node gradient from voxel space to real (millimetre) space.
//
// One thread per control point (node). The gradient vector (x, y, z; w is
// never read) is multiplied by the 3x3 part of the image's voxel-to-real
// orientation matrix (the sform/qform without its translation), given as nine
// scalars in row-major order: row r of the matrix gives output component r,
//     out.x = m00 * g.x + m01 * g.y + m02 * g.z
//     out.y = m10 * g.x + m11 * g.y + m12 * g.z
//     out.z = m20 * g.x + m21 * g.y + m22 * g.z
// Output w is 0.

extern "C" __global__ void gradient_to_real_space(const float4* nodeGradient, int controlPointNumber, float m00, float m01, float m02, float m10, float m11, float m12, float m20, float m21, float m22, float4* realGradient) {
    int tid;
    float4 gradient;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        gradient = nodeGradient[tid];
        result.x = m00 * gradient.x + m01 * gradient.y + m02 * gradient.z;
        result.y = m10 * gradient.x + m11 * gradient.y + m12 * gradient.z;
        result.z = m20 * gradient.x + m21 * gradient.y + m22 * gradient.z;
        result.w = 0.0f;
        realGradient[tid] = result;
    }
}
