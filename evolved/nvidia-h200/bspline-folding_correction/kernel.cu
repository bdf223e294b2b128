// Folding correction of a cubic B-spline transformation: control points
// around folded nodes are moved so that the Jacobian determinant there grows.
//
// Everything is in voxel space, with the grid convention of
// bspline_deformation_field: control point (i, j, k) sits at voxel
// ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ) and holds a
// displacement (x, y, z; w unused). At a node the cubic B-spline has support
// on the node and its two neighbours per axis (offsets -1, 0, +1), with
//   basis values            (1/6, 4/6, 1/6),
//   first-derivative values (-1/2, 0, 1/2) / spacing.
// The (approximate) Jacobian matrix at node n is J = I + D with
// D[c][k] = du_c/dx_k = sum over the 27 control points P around n of
// W_k(a, b, c) * P_c, where W_x(a, b, c) = first_x[a] * basis[b] * basis[c]
// (and likewise for y, z). jacobianDeterminant[n] = det(J) is an input
// (computed beforehand); only interior nodes (not on the grid's outer layer)
// have a Jacobian, so only those are read.
//
// For control point m, every interior node n whose stencil holds m (the 27
// nodes n = m - offset) and whose determinant is <= 0 contributes the
// gradient of det(J_n) with respect to m's displacement:
//   d det / dP_m,c = sum_k cofactor(J_n)[c][k] * W_k(offset + 1),
// with J_n recomputed from the control points. The control point then takes
// one gradient-ascent step on the determinants of its folded nodes:
//   P_m += step * g
// (g = 0, i.e. the point is copied unchanged, without a folded neighbour).
// The step is not normalised by |g|: a direction normalised by a small |g|
// would be ill-conditioned, and the update stays linear in g.
// One thread per control point; correctedGrid[m] is the moved control point
// (w copied from the input).

extern "C" __global__ void bspline_folding_correction(const float4* controlPointGrid, const float* jacobianDeterminant, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float step, float4* correctedGrid) {
    int tid;
    int nodeNumber;
    int x;
    int y;
    int z;
    int X;
    int Y;
    int Z;
    int nodeIndex;
    int controlPointIndex;
    float basis[3];
    float xFirst[3];
    float yFirst[3];
    float zFirst[3];
    float weightX;
    float weightY;
    float weightZ;
    float jxx;
    float jxy;
    float jxz;
    float jyx;
    float jyy;
    float jyz;
    float jzx;
    float jzy;
    float jzz;
    float cxx;
    float cxy;
    float cxz;
    float cyx;
    float cyy;
    float cyz;
    float czx;
    float czy;
    float czz;
    float correctionX;
    float correctionY;
    float correctionZ;
    float4 controlPoint;
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
        correctionX = 0.0f;
        correctionY = 0.0f;
        correctionZ = 0.0f;
        for (int c = 0; c < 3; c++) {
            Z = z + 1 - c;
            #pragma unroll
            for (int b = 0; b < 3; b++) {
                Y = y + 1 - b;
                for (int a = 0; a < 3; a++) {
                    X = x + 1 - a;
                    if (X > 0 && X < controlPointDimX - 1 && Y > 0 && Y < controlPointDimY - 1 && Z > 0 && Z < controlPointDimZ - 1) {
                        nodeIndex = (Z * controlPointDimY + Y) * controlPointDimX + X;
                        if (jacobianDeterminant[nodeIndex] <= 0.0f) {
                            jxx = 1.0f;
                            jxy = 0.0f;
                            jxz = 0.0f;
                            jyx = 0.0f;
                            jyy = 1.0f;
                            jyz = 0.0f;
                            jzx = 0.0f;
                            jzy = 0.0f;
                            jzz = 1.0f;
                            for (int k = 0; k < 3; k++) {
                                for (int j = 0; j < 3; j++) {
                                    for (int i = 0; i < 3; i++) {
                                        controlPointIndex = ((Z + k - 1) * controlPointDimY + Y + j - 1) * controlPointDimX + X + i - 1;
                                        controlPoint = controlPointGrid[controlPointIndex];
                                        weightX = xFirst[i] * basis[j] * basis[k];
                                        weightY = basis[i] * yFirst[j] * basis[k];
                                        weightZ = basis[i] * basis[j] * zFirst[k];
                                        jxx += weightX * controlPoint.x;
                                        jxy += weightY * controlPoint.x;
                                        jxz += weightZ * controlPoint.x;
                                        jyx += weightX * controlPoint.y;
                                        jyy += weightY * controlPoint.y;
                                        jyz += weightZ * controlPoint.y;
                                        jzx += weightX * controlPoint.z;
                                        jzy += weightY * controlPoint.z;
                                        jzz += weightZ * controlPoint.z;
                                    }
                                }
                            }
                            cxx = jyy * jzz - jyz * jzy;
                            cxy = jyz * jzx - jyx * jzz;
                            cxz = jyx * jzy - jyy * jzx;
                            cyx = jxz * jzy - jxy * jzz;
                            cyy = jxx * jzz - jxz * jzx;
                            cyz = jxy * jzx - jxx * jzy;
                            czx = jxy * jyz - jxz * jyy;
                            czy = jxz * jyx - jxx * jyz;
                            czz = jxx * jyy - jxy * jyx;
                            weightX = xFirst[a] * basis[b] * basis[c];
                            weightY = basis[a] * yFirst[b] * basis[c];
                            weightZ = basis[a] * basis[b] * zFirst[c];
                            correctionX += cxx * weightX + cxy * weightY + cxz * weightZ;
                            correctionY += cyx * weightX + cyy * weightY + cyz * weightZ;
                            correctionZ += czx * weightX + czy * weightY + czz * weightZ;
                        }
                    }
                }
            }
        }
        controlPoint = controlPointGrid[tid];
        result = controlPoint;
        result.x = controlPoint.x + step * correctionX;
        result.y = controlPoint.y + step * correctionY;
        result.z = controlPoint.z + step * correctionZ;
        correctedGrid[tid] = result;
    }
}
