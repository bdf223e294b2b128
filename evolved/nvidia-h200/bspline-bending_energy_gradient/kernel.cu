// Analytic gradient of the total bending energy of a cubic B-spline
// displacement field with respect to every control point.
//
// Everything is in voxel space, with the grid convention of
// bspline_deformation_field: control point (i, j, k) sits at voxel
// ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ). At a node the
// cubic B-spline has support on the node and its two neighbours per axis
// (offsets -1, 0, +1), with
//   basis values            (1/6, 4/6, 1/6),
//   first-derivative values (-1/2, 0, 1/2) / spacing,
//   second-derivative values (1, -2, 1) / spacing^2.
// The total energy is E = sum over interior nodes n and components u of
//   xx^2 + yy^2 + zz^2 + 2 * (xy^2 + yz^2 + xz^2)
// (bspline_bending_energy); each second derivative at n is linear in the 27
// control points around n. So the gradient at control point m is a sum over
// the (up to) 27 interior nodes n = m - offset whose stencil contains m:
//   dE/dP_m = sum_n 2 * xx_n * W_xx(offset) + ... + 4 * xy_n * W_xy(offset) + ...
// where W_xx(a, b, c) = second_x[a] * basis[b] * basis[c] and
// W_xy(a, b, c) = first_x[a] * first_y[b] * basis[c] are the stencil weights
// of m seen from n (a, b, c = offset + 1 per axis).
//
// Input: the second-derivative field of bspline_second_derivatives (6 float4
// per node: xx, yy, zz, xy, yz, xz; zero on the grid's outer layer). Only
// interior nodes (not on the outer layer) are read: border nodes have no
// energy. One thread per control point; gradient[m] = (x, y, z, 0).

extern "C" __global__ void __launch_bounds__(512, 1) bspline_bending_energy_gradient(const float4* secondDerivatives, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float4* gradient) {
    int tid;
    int nodeNumber;
    int x;
    int y;
    int z;
    int X;
    int Y;
    int Z;
    int nodeIndex;
    float basis[3];
    float xFirst[3];
    float yFirst[3];
    float zFirst[3];
    float xSecond[3];
    float ySecond[3];
    float zSecond[3];
    float weight;
    float4 derivative;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    nodeNumber = controlPointDimX * controlPointDimY * controlPointDimZ;
    if (tid < nodeNumber) {
        z = tid / (controlPointDimX * controlPointDimY);
        y = (tid - z * controlPointDimX * controlPointDimY) / controlPointDimX;
        x = tid - (z * controlPointDimY + y) * controlPointDimX;
        basis[0] = 1.0f / 6.0f;
        basis[1] = 4.0f / 6.0f;
        basis[2] = 1.0f / 6.0f;
        xFirst[0] = -0.5f / spacingX;
        xFirst[1] = 0.0f;
        xFirst[2] = 0.5f / spacingX;
        yFirst[0] = -0.5f / spacingY;
        yFirst[1] = 0.0f;
        yFirst[2] = 0.5f / spacingY;
        zFirst[0] = -0.5f / spacingZ;
        zFirst[1] = 0.0f;
        zFirst[2] = 0.5f / spacingZ;
        xSecond[0] = 1.0f / (spacingX * spacingX);
        xSecond[1] = -2.0f / (spacingX * spacingX);
        xSecond[2] = 1.0f / (spacingX * spacingX);
        ySecond[0] = 1.0f / (spacingY * spacingY);
        ySecond[1] = -2.0f / (spacingY * spacingY);
        ySecond[2] = 1.0f / (spacingY * spacingY);
        zSecond[0] = 1.0f / (spacingZ * spacingZ);
        zSecond[1] = -2.0f / (spacingZ * spacingZ);
        zSecond[2] = 1.0f / (spacingZ * spacingZ);
        result = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int c = 0; c < 3; c++) {
            Z = z + 1 - c;
            for (int b = 0; b < 3; b++) {
                Y = y + 1 - b;
                for (int a = 0; a < 3; a++) {
                    X = x + 1 - a;
                    if (X > 0 && X < controlPointDimX - 1 && Y > 0 && Y < controlPointDimY - 1 && Z > 0 && Z < controlPointDimZ - 1) {
                        nodeIndex = (Z * controlPointDimY + Y) * controlPointDimX + X;
                        derivative = secondDerivatives[6 * nodeIndex + 0];
                        weight = 2.0f * xSecond[a] * basis[b] * basis[c];
                        result.x += weight * derivative.x;
                        result.y += weight * derivative.y;
                        result.z += weight * derivative.z;
                        derivative = secondDerivatives[6 * nodeIndex + 1];
                        weight = 2.0f * basis[a] * ySecond[b] * basis[c];
                        result.x += weight * derivative.x;
                        result.y += weight * derivative.y;
                        result.z += weight * derivative.z;
                        derivative = secondDerivatives[6 * nodeIndex + 2];
                        weight = 2.0f * basis[a] * basis[b] * zSecond[c];
                        result.x += weight * derivative.x;
                        result.y += weight * derivative.y;
                        result.z += weight * derivative.z;
                        derivative = secondDerivatives[6 * nodeIndex + 3];
                        weight = 4.0f * xFirst[a] * yFirst[b] * basis[c];
                        result.x += weight * derivative.x;
                        result.y += weight * derivative.y;
                        result.z += weight * derivative.z;
                        derivative = secondDerivatives[6 * nodeIndex + 4];
                        weight = 4.0f * basis[a] * yFirst[b] * zFirst[c];
                        result.x += weight * derivative.x;
                        result.y += weight * derivative.y;
                        result.z += weight * derivative.z;
                        derivative = secondDerivatives[6 * nodeIndex + 5];
                        weight = 4.0f * xFirst[a] * basis[b] * zFirst[c];
                        result.x += weight * derivative.x;
                        result.y += weight * derivative.y;
                        result.z += weight * derivative.z;
                    }
                }
            }
        }
        result.w = 0.0f;
        gradient[tid] = result;
    }
}
