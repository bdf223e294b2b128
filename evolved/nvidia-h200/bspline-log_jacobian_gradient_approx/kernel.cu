// Gradient of the approximate log-Jacobian penalty of a cubic B-spline
// free-form deformation with respect to every control point.
//
// Penalty: sum over the interior nodes n of (ln det J_n)^2, J_n the
// approximate Jacobian at node n (bspline_jacobian_nodes: interior nodes
// 1 .. controlPointDim - 2 on every axis, 9 floats per node, row-major,
// jacobianMatrices[9 * n + 3 * r + c] = d(deformation_r) / d(x_c), node
// (x + 1, y + 1, z + 1) at n = (z * (controlPointDimY - 2) + y) *
// (controlPointDimX - 2) + x). J_n depends linearly on its 27 neighbours: the
// control point at offset (a, b, c) in {-1, 0, 1}^3 adds its displacement
// times the weight vector w = (dB(a) B(b) B(c) / spacingX,
// B(a) dB(b) B(c) / spacingY, B(a) B(b) dB(c) / spacingZ), with
// B = (1/6, 4/6, 1/6) and dB = (-1/2, 0, 1/2) at offsets -1, 0, +1. Since
// d(ln det J)/dJ = J^{-T}, control point m receives from every interior node n
// it is a neighbour of the vector 2 ln(det J_n) J_n^{-T} w (J^{-T} = cofactor
// matrix / det). A folded node (det <= 0) has the constant penalty 1000 and
// contributes nothing.
//
// One thread per control point (all of them, border points included: they
// are neighbours of interior nodes); output float4 (x, y, z, w = 0).

extern "C" __global__ void bspline_log_jacobian_gradient_approx(const float* jacobianMatrices, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, int controlPointNumber, float4* gradient) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int nodeX;
    int nodeY;
    int nodeZ;
    int nodeIndex;
    float basis[3];
    float derivative[3];
    float weightX;
    float weightY;
    float weightZ;
    float jacobian[9];
    float cofactor[9];
    float determinant;
    float scale;
    float gradientX;
    float gradientY;
    float gradientZ;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < controlPointNumber) {
        basis[0] = 1.0f / 6.0f;
        basis[1] = 4.0f / 6.0f;
        basis[2] = 1.0f / 6.0f;
        derivative[0] = -0.5f;
        derivative[1] = 0.0f;
        derivative[2] = 0.5f;
        index = tid;
        z = index / (controlPointDimX * controlPointDimY);
        index = index - z * controlPointDimX * controlPointDimY;
        y = index / controlPointDimX;
        x = index - y * controlPointDimX;
        gradientX = 0.0f;
        gradientY = 0.0f;
        gradientZ = 0.0f;
        #pragma unroll
        for (int c = 0; c < 3; c++) {
            for (int b = 0; b < 3; b++) {
                for (int a = 0; a < 3; a++) {
                    nodeX = x + 1 - a;
                    nodeY = y + 1 - b;
                    nodeZ = z + 1 - c;
                    if (nodeX >= 1 && nodeX <= controlPointDimX - 2 && nodeY >= 1 && nodeY <= controlPointDimY - 2 && nodeZ >= 1 && nodeZ <= controlPointDimZ - 2) {
                        nodeIndex = ((nodeZ - 1) * (controlPointDimY - 2) + nodeY - 1) * (controlPointDimX - 2) + nodeX - 1;
                        for (int i = 0; i < 9; i++) {
                            jacobian[i] = jacobianMatrices[9 * nodeIndex + i];
                        }
                        cofactor[0] = jacobian[4] * jacobian[8] - jacobian[5] * jacobian[7];
                        cofactor[1] = jacobian[5] * jacobian[6] - jacobian[3] * jacobian[8];
                        cofactor[2] = jacobian[3] * jacobian[7] - jacobian[4] * jacobian[6];
                        cofactor[3] = jacobian[2] * jacobian[7] - jacobian[1] * jacobian[8];
                        cofactor[4] = jacobian[0] * jacobian[8] - jacobian[2] * jacobian[6];
                        cofactor[5] = jacobian[1] * jacobian[6] - jacobian[0] * jacobian[7];
                        cofactor[6] = jacobian[1] * jacobian[5] - jacobian[2] * jacobian[4];
                        cofactor[7] = jacobian[2] * jacobian[3] - jacobian[0] * jacobian[5];
                        cofactor[8] = jacobian[0] * jacobian[4] - jacobian[1] * jacobian[3];
                        determinant = jacobian[0] * cofactor[0] + jacobian[1] * cofactor[1] + jacobian[2] * cofactor[2];
                        if (determinant > 0.0f) {
                            cofactor[5] = jacobian[1] * jacobian[6] - jacobian[0] * jacobian[7];
                            scale = 2.0f * logf(determinant) / determinant;
                            weightX = derivative[a] * basis[b] * basis[c] / spacingX;
                            weightY = basis[a] * derivative[b] * basis[c] / spacingY;
                            weightZ = basis[a] * basis[b] * derivative[c] / spacingZ;
                            gradientX += scale * (cofactor[0] * weightX + cofactor[1] * weightY + cofactor[2] * weightZ);
                            gradientY += scale * (cofactor[3] * weightX + cofactor[4] * weightY + cofactor[5] * weightZ);
                            gradientZ += scale * (cofactor[6] * weightX + cofactor[7] * weightY + cofactor[8] * weightZ);
                        }
                    }
                }
            }
        }
        result.x = gradientX;
        result.y = gradientY;
        result.z = gradientZ;
        result.w = 0.0f;
        gradient[tid] = result;
    }
}
