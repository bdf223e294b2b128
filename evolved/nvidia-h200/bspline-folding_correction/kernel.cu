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
    // gi registers: basis is read below with literal indices only (a select per element), so it stays in registers
    float basis[3];
    float xFirst[3];
    // gi registers: yFirst is read below with literal indices only (a select per element), so it stays in registers
    float yFirst[3];
    // gi registers: zFirst is read below with literal indices only (a select per element), so it stays in registers
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
                                    {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                                        float gi_factor_113_0 = 0.0f;  // xFirst[i] * controlPoint.x
                                        float gi_factor_113_1 = 0.0f;  // basis[i] * controlPoint.x
                                        float gi_factor_113_2 = 0.0f;  // xFirst[i] * controlPoint.y
                                        float gi_factor_113_3 = 0.0f;  // basis[i] * controlPoint.y
                                        float gi_factor_113_4 = 0.0f;  // xFirst[i] * controlPoint.z
                                        float gi_factor_113_5 = 0.0f;  // basis[i] * controlPoint.z
                                        for (int i = 0; i < 3; i++) {
                                            controlPointIndex = ((Z + k - 1) * controlPointDimY + Y + j - 1) * controlPointDimX + X + i - 1;
                                            controlPoint = controlPointGrid[controlPointIndex];
                                            weightX = xFirst[i] * (j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2]));
                                            weightY = (i == 0 ? basis[0] : (i == 1 ? basis[1] : basis[2])) * (j == 0 ? yFirst[0] : (j == 1 ? yFirst[1] : yFirst[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2]));
                                            weightZ = (i == 0 ? basis[0] : (i == 1 ? basis[1] : basis[2])) * (j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? zFirst[0] : (k == 1 ? zFirst[1] : zFirst[2]));
                                            gi_factor_113_0 += xFirst[i] * controlPoint.x;
                                            gi_factor_113_1 += (i == 0 ? basis[0] : (i == 1 ? basis[1] : basis[2])) * controlPoint.x;
                                            // gi factor: jxz takes its sum from gi_factor_113_1
                                            gi_factor_113_2 += xFirst[i] * controlPoint.y;
                                            gi_factor_113_3 += (i == 0 ? basis[0] : (i == 1 ? basis[1] : basis[2])) * controlPoint.y;
                                            // gi factor: jyz takes its sum from gi_factor_113_3
                                            gi_factor_113_4 += xFirst[i] * controlPoint.z;
                                            gi_factor_113_5 += (i == 0 ? basis[0] : (i == 1 ? basis[1] : basis[2])) * controlPoint.z;
                                            // gi factor: jzz takes its sum from gi_factor_113_5
                                        }
                                        jxx += gi_factor_113_0 * ((j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2])));
                                        jxy += gi_factor_113_1 * ((j == 0 ? yFirst[0] : (j == 1 ? yFirst[1] : yFirst[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2])));
                                        jxz += gi_factor_113_1 * ((j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? zFirst[0] : (k == 1 ? zFirst[1] : zFirst[2])));
                                        jyx += gi_factor_113_2 * ((j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2])));
                                        jyy += gi_factor_113_3 * ((j == 0 ? yFirst[0] : (j == 1 ? yFirst[1] : yFirst[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2])));
                                        jyz += gi_factor_113_3 * ((j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? zFirst[0] : (k == 1 ? zFirst[1] : zFirst[2])));
                                        jzx += gi_factor_113_4 * ((j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2])));
                                        jzy += gi_factor_113_5 * ((j == 0 ? yFirst[0] : (j == 1 ? yFirst[1] : yFirst[2])) * (k == 0 ? basis[0] : (k == 1 ? basis[1] : basis[2])));
                                        jzz += gi_factor_113_5 * ((j == 0 ? basis[0] : (j == 1 ? basis[1] : basis[2])) * (k == 0 ? zFirst[0] : (k == 1 ? zFirst[1] : zFirst[2])));
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
                            weightX = xFirst[a] * (b == 0 ? basis[0] : (b == 1 ? basis[1] : basis[2])) * (c == 0 ? basis[0] : (c == 1 ? basis[1] : basis[2]));
                            weightY = (a == 0 ? basis[0] : (a == 1 ? basis[1] : basis[2])) * (b == 0 ? yFirst[0] : (b == 1 ? yFirst[1] : yFirst[2])) * (c == 0 ? basis[0] : (c == 1 ? basis[1] : basis[2]));
                            weightZ = (a == 0 ? basis[0] : (a == 1 ? basis[1] : basis[2])) * (b == 0 ? basis[0] : (b == 1 ? basis[1] : basis[2])) * (c == 0 ? zFirst[0] : (c == 1 ? zFirst[1] : zFirst[2]));
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
