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

extern "C" __global__ void __launch_bounds__(256, 1) bspline_bending_energy(const float4* controlPointGrid, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float* bendingEnergy) {
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
    for (int gi_item = 0; gi_item < 2; gi_item++) {
        tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x;
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
                #pragma unroll 4
                for (int c = 0; c < 3; c++) {
                    for (int b = 0; b < 3; b++) {
                        for (int a = 0; a < 3; a++) {
                            controlPointIndex = ((z + c - 1) * controlPointDimY + y + b - 1) * controlPointDimX + x + a - 1;
                            controlPoint = controlPointGrid[controlPointIndex];
                            weight = xSecond[a] * basis[b] * basis[c];
                            xx.x += weight * controlPoint.x;
                            xx.y += weight * controlPoint.y;
                            xx.z += weight * controlPoint.z;
                            weight = basis[a] * ySecond[b] * basis[c];
                            yy.x += weight * controlPoint.x;
                            yy.y += weight * controlPoint.y;
                            yy.z += weight * controlPoint.z;
                            weight = basis[a] * basis[b] * zSecond[c];
                            zz.x += weight * controlPoint.x;
                            zz.y += weight * controlPoint.y;
                            zz.z += weight * controlPoint.z;
                            weight = xFirst[a] * yFirst[b] * basis[c];
                            xy.x += weight * controlPoint.x;
                            xy.y += weight * controlPoint.y;
                            xy.z += weight * controlPoint.z;
                            weight = basis[a] * yFirst[b] * zFirst[c];
                            yz.x += weight * controlPoint.x;
                            yz.y += weight * controlPoint.y;
                            yz.z += weight * controlPoint.z;
                            weight = xFirst[a] * basis[b] * zFirst[c];
                            xz.x += weight * controlPoint.x;
                            xz.y += weight * controlPoint.y;
                            xz.z += weight * controlPoint.z;
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
}
