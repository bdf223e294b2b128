// Bending energy of a cubic B-spline displacement field at every control
// point (node), from the control points alone.
//
// Everything is in voxel space, with the grid convention of
// bspline_deformation_field: control point (i, j, k) sits at voxel
// ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ) and holds a
// displacement (x, y, z; w unused). At a node the cubic B-spline has support
// on the node and its two neighbours per axis (offsets -1, 0, +1), with
//   basis values            (1/6, 4/6, 1/6),
//   first-derivative values (-1/2, 0, 1/2) / spacing,
//   second-derivative values (1, -2, 1) / spacing^2,
// so the six second derivatives (xx, yy, zz, xy, yz, xz) of each displacement
// component are 27-point stencils over the neighbouring control points (as in
// bspline_second_derivatives). The node's bending energy is, summed over the
// x, y and z components,
//   xx^2 + yy^2 + zz^2 + 2 * (xy^2 + yz^2 + xz^2).
// The total bending energy is the sum over the nodes (a separate reduction).
//
// One thread per node; bendingEnergy[node]. Border: a node on the outer layer
// of the grid (i == 0 or i == dim - 1 on any axis) has no full stencil; its
// energy is written as zero.

extern "C" __global__ void bspline_bending_energy(const float4* controlPointGrid, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float* bendingEnergy) {
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
    float energy;
    float4 controlPoint;
    float4 xx;
    float4 yy;
    float4 zz;
    float4 xy;
    float4 yz;
    float4 xz;
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
        energy = 0.0f;
        if (x > 0 && x < controlPointDimX - 1 && y > 0 && y < controlPointDimY - 1 && z > 0 && z < controlPointDimZ - 1) {
            xx = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            yy = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            zz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            xy = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            yz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            xz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int c = 0; c < 3; c++) {
                for (int b = 0; b < 3; b++) {
                    {  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it
                        float gi_factor_83_0 = 0.0f;  // xSecond[a] * controlPoint.x
                        float gi_factor_83_1 = 0.0f;  // xSecond[a] * controlPoint.y
                        float gi_factor_83_2 = 0.0f;  // xSecond[a] * controlPoint.z
                        float gi_factor_83_3 = 0.0f;  // basis[a] * controlPoint.x
                        float gi_factor_83_4 = 0.0f;  // basis[a] * controlPoint.y
                        float gi_factor_83_5 = 0.0f;  // basis[a] * controlPoint.z
                        float gi_factor_83_6 = 0.0f;  // xFirst[a] * controlPoint.x
                        float gi_factor_83_7 = 0.0f;  // xFirst[a] * controlPoint.y
                        float gi_factor_83_8 = 0.0f;  // xFirst[a] * controlPoint.z
                        for (int a = 0; a < 3; a++) {
                            controlPointIndex = ((z + c - 1) * controlPointDimY + y + b - 1) * controlPointDimX + x + a - 1;
                            controlPoint = controlPointGrid[controlPointIndex];
                            gi_factor_83_0 += xSecond[a] * controlPoint.x;
                            gi_factor_83_1 += xSecond[a] * controlPoint.y;
                            gi_factor_83_2 += xSecond[a] * controlPoint.z;
                            gi_factor_83_3 += basis[a] * controlPoint.x;
                            gi_factor_83_4 += basis[a] * controlPoint.y;
                            gi_factor_83_5 += basis[a] * controlPoint.z;
                            // gi factor: zz.x takes its sum from gi_factor_83_3
                            // gi factor: zz.y takes its sum from gi_factor_83_4
                            // gi factor: zz.z takes its sum from gi_factor_83_5
                            gi_factor_83_6 += xFirst[a] * controlPoint.x;
                            gi_factor_83_7 += xFirst[a] * controlPoint.y;
                            gi_factor_83_8 += xFirst[a] * controlPoint.z;
                            // gi factor: yz.x takes its sum from gi_factor_83_3
                            // gi factor: yz.y takes its sum from gi_factor_83_4
                            // gi factor: yz.z takes its sum from gi_factor_83_5
                            // gi factor: xz.x takes its sum from gi_factor_83_6
                            // gi factor: xz.y takes its sum from gi_factor_83_7
                            // gi factor: xz.z takes its sum from gi_factor_83_8
                        }
                        xx.x += gi_factor_83_0 * (basis[b] * basis[c]);
                        xx.y += gi_factor_83_1 * (basis[b] * basis[c]);
                        xx.z += gi_factor_83_2 * (basis[b] * basis[c]);
                        yy.x += gi_factor_83_3 * (ySecond[b] * basis[c]);
                        yy.y += gi_factor_83_4 * (ySecond[b] * basis[c]);
                        yy.z += gi_factor_83_5 * (ySecond[b] * basis[c]);
                        zz.x += gi_factor_83_3 * (basis[b] * zSecond[c]);
                        zz.y += gi_factor_83_4 * (basis[b] * zSecond[c]);
                        zz.z += gi_factor_83_5 * (basis[b] * zSecond[c]);
                        xy.x += gi_factor_83_6 * (yFirst[b] * basis[c]);
                        xy.y += gi_factor_83_7 * (yFirst[b] * basis[c]);
                        xy.z += gi_factor_83_8 * (yFirst[b] * basis[c]);
                        yz.x += gi_factor_83_3 * (yFirst[b] * zFirst[c]);
                        yz.y += gi_factor_83_4 * (yFirst[b] * zFirst[c]);
                        yz.z += gi_factor_83_5 * (yFirst[b] * zFirst[c]);
                        xz.x += gi_factor_83_6 * (basis[b] * zFirst[c]);
                        xz.y += gi_factor_83_7 * (basis[b] * zFirst[c]);
                        xz.z += gi_factor_83_8 * (basis[b] * zFirst[c]);
                    }
                }
            }
            energy += xx.x * xx.x + xx.y * xx.y + xx.z * xx.z;
            energy += yy.x * yy.x + yy.y * yy.y + yy.z * yy.z;
            energy += zz.x * zz.x + zz.y * zz.y + zz.z * zz.z;
            energy += 2.0f * (xy.x * xy.x + xy.y * xy.y + xy.z * xy.z);
            energy += 2.0f * (yz.x * yz.x + yz.y * yz.y + yz.z * yz.z);
            energy += 2.0f * (xz.x * xz.x + xz.y * xz.y + xz.z * xz.z);
        }
        bendingEnergy[tid] = energy;
    }
}
