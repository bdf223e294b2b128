// Second derivatives of a cubic B-spline displacement field at the control
// points (nodes), from the control points alone.
//
// Everything is in voxel space, with the grid convention of
// bspline_deformation_field: control point (i, j, k) sits at voxel
// ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ) and holds a
// displacement (x, y, z; w unused). At a node the cubic B-spline has support
// on the node and its two neighbours per axis (offsets -1, 0, +1), with
//   basis values            (1/6, 4/6, 1/6),
//   first-derivative values (-1/2, 0, 1/2) / spacing,
//   second-derivative values (1, -2, 1) / spacing^2,
// so each second derivative is a 27-point stencil over the neighbouring
// control points, e.g. d2u/dxdy = sum first_x[a] * first_y[b] * basis[c] * P.
//
// One thread per node. Output: 6 float4 per node, in the order xx, yy, zz,
// xy, yz, xz; each holds the derivative of the x, y and z displacement
// (w = 0): secondDerivatives[6 * node + d].
//
// Border: a node on the outer layer of the grid (i == 0 or i == dim - 1 on
// any axis) has no full stencil; its six derivatives are written as zero
// (skip-and-zero), so it adds nothing to the bending energy.

extern "C" __global__ void bspline_second_derivatives(const float4* controlPointGrid, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float4* secondDerivatives) {
    int tid;
    int nodeNumber;
    int x;
    int y;
    int z;
    int controlPointIndex;
    float basis[3];
    float xFirst[3];
    float yFirst[3];
    float zFirst[3];
    float xSecond[3];
    float ySecond[3];
    float zSecond[3];
    float weight;
    float4 controlPoint;
    float4 xx;
    float4 yy;
    float4 zz;
    float4 xy;
    float4 yz;
    float4 xz;
    // gi stage: the threads' records pass through shared memory; the block moves them to and from global memory in consecutive elements
    extern __shared__ float4 gi_stage_area[];
    const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item
    float4* gi_stage_secondDerivatives = reinterpret_cast<float4*>(gi_stage_area);  // 6 a thread
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
        xx = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        yy = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        zz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        xy = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        yz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        xz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (x > 0 && x < controlPointDimX - 1 && y > 0 && y < controlPointDimY - 1 && z > 0 && z < controlPointDimZ - 1) {
            for (int c = 0; c < 3; c++) {
                for (int b = 0; b < 3; b++) {
                    {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                        float gi_factor_81_0 = 0.0f;  // xSecond[a] * controlPoint.x
                        float gi_factor_81_1 = 0.0f;  // xSecond[a] * controlPoint.y
                        float gi_factor_81_2 = 0.0f;  // xSecond[a] * controlPoint.z
                        float gi_factor_81_3 = 0.0f;  // basis[a] * controlPoint.x
                        float gi_factor_81_4 = 0.0f;  // basis[a] * controlPoint.y
                        float gi_factor_81_5 = 0.0f;  // basis[a] * controlPoint.z
                        float gi_factor_81_6 = 0.0f;  // xFirst[a] * controlPoint.x
                        float gi_factor_81_7 = 0.0f;  // xFirst[a] * controlPoint.y
                        float gi_factor_81_8 = 0.0f;  // xFirst[a] * controlPoint.z
                        for (int a = 0; a < 3; a++) {
                            controlPointIndex = ((z + c - 1) * controlPointDimY + y + b - 1) * controlPointDimX + x + a - 1;
                            controlPoint = controlPointGrid[controlPointIndex];
                            gi_factor_81_0 += xSecond[a] * controlPoint.x;
                            gi_factor_81_1 += xSecond[a] * controlPoint.y;
                            gi_factor_81_2 += xSecond[a] * controlPoint.z;
                            gi_factor_81_3 += basis[a] * controlPoint.x;
                            gi_factor_81_4 += basis[a] * controlPoint.y;
                            gi_factor_81_5 += basis[a] * controlPoint.z;
                            // gi factor: zz.x takes its sum from gi_factor_81_3
                            // gi factor: zz.y takes its sum from gi_factor_81_4
                            // gi factor: zz.z takes its sum from gi_factor_81_5
                            gi_factor_81_6 += xFirst[a] * controlPoint.x;
                            gi_factor_81_7 += xFirst[a] * controlPoint.y;
                            gi_factor_81_8 += xFirst[a] * controlPoint.z;
                            // gi factor: yz.x takes its sum from gi_factor_81_3
                            // gi factor: yz.y takes its sum from gi_factor_81_4
                            // gi factor: yz.z takes its sum from gi_factor_81_5
                            // gi factor: xz.x takes its sum from gi_factor_81_6
                            // gi factor: xz.y takes its sum from gi_factor_81_7
                            // gi factor: xz.z takes its sum from gi_factor_81_8
                        }
                        xx.x += gi_factor_81_0 * (basis[b] * basis[c]);
                        xx.y += gi_factor_81_1 * (basis[b] * basis[c]);
                        xx.z += gi_factor_81_2 * (basis[b] * basis[c]);
                        yy.x += gi_factor_81_3 * (ySecond[b] * basis[c]);
                        yy.y += gi_factor_81_4 * (ySecond[b] * basis[c]);
                        yy.z += gi_factor_81_5 * (ySecond[b] * basis[c]);
                        zz.x += gi_factor_81_3 * (basis[b] * zSecond[c]);
                        zz.y += gi_factor_81_4 * (basis[b] * zSecond[c]);
                        zz.z += gi_factor_81_5 * (basis[b] * zSecond[c]);
                        xy.x += gi_factor_81_6 * (yFirst[b] * basis[c]);
                        xy.y += gi_factor_81_7 * (yFirst[b] * basis[c]);
                        xy.z += gi_factor_81_8 * (yFirst[b] * basis[c]);
                        yz.x += gi_factor_81_3 * (yFirst[b] * zFirst[c]);
                        yz.y += gi_factor_81_4 * (yFirst[b] * zFirst[c]);
                        yz.z += gi_factor_81_5 * (yFirst[b] * zFirst[c]);
                        xz.x += gi_factor_81_6 * (basis[b] * zFirst[c]);
                        xz.y += gi_factor_81_7 * (basis[b] * zFirst[c]);
                        xz.z += gi_factor_81_8 * (basis[b] * zFirst[c]);
                    }
                }
            }
        }
        gi_stage_secondDerivatives[(6 * tid + 0) - 6 * gi_stage_first] = xx;
        gi_stage_secondDerivatives[(6 * tid + 1) - 6 * gi_stage_first] = yy;
        gi_stage_secondDerivatives[(6 * tid + 2) - 6 * gi_stage_first] = zz;
        gi_stage_secondDerivatives[(6 * tid + 3) - 6 * gi_stage_first] = xy;
        gi_stage_secondDerivatives[(6 * tid + 4) - 6 * gi_stage_first] = yz;
        gi_stage_secondDerivatives[(6 * tid + 5) - 6 * gi_stage_first] = xz;
    }
    __syncthreads();  // gi stage: every record of the block is in shared memory
    {
        long long gi_items = (long long)(nodeNumber) - gi_stage_first;  // the block's items below the guard's bound
        if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;
        for (int gi_j = threadIdx.x; gi_j < 6 * (int)gi_items; gi_j += blockDim.x)
            secondDerivatives[6 * gi_stage_first + gi_j] = gi_stage_secondDerivatives[gi_j];
    }
}
