// Control-grid refinement between two levels of the B-spline registration
// pyramid: the coarse level's cubic B-spline displacement field, subdivided
// once, becomes the control grid of the next (finer) level.
//
// Grid convention of bspline_deformation_field: control point (i, j, k) sits
// at voxel ((i - 1) * s, (j - 1) * s, (k - 1) * s) of its level and holds a
// displacement (x, y, z; w unused) in voxels of its level. The pyramid
// (tools/pyramid_level) maps coarse voxel v onto fine voxel 2v, and the
// spacing in voxels s is the same at both levels, so per axis fine node
// 2i - 1 lies on coarse node i and fine node 2i halfway between coarse nodes
// i and i + 1. Subdividing a uniform cubic B-spline once gives, per axis,
//   fine node j odd  (j = 2i - 1): (c[i - 1] + 6 c[i] + c[i + 1]) / 8   (vertex rule)
//   fine node j even (j = 2i):     (c[i] + c[i + 1]) / 2               (edge rule)
// and in 3D the tensor product of the three axes' rules (3 or 2 coarse
// points per axis: 8 to 27 in all), so the fine spline is the coarse one
// wherever every node it uses exists. A coarse index above coarseDim - 1 is
// clamped to the grid's last node (indices are never negative: the first
// coarse index of fine node j is (j - 1) / 2 or j / 2); only the outermost
// fine nodes, which barely touch the image, read one. The weighted sum
// (x, y, z) is multiplied by displacementScale (2 when the voxel size halves:
// a displacement of one coarse voxel is two fine voxels); w = 0.
//
// One thread per fine control point: fineGrid[(k * fineDimY + j) * fineDimX + i].

extern "C" __global__ void bspline_refine_grid(const float4* coarseGrid, int coarseDimX, int coarseDimY, int coarseDimZ, int fineDimX, int fineDimY, int fineDimZ, float displacementScale, float4* fineGrid) {
    int tid;
    int x;
    int y;
    int z;
    int xFirst;
    int yFirst;
    int zFirst;
    int xCount;
    int yCount;
    int zCount;
    int X;
    int Y;
    int Z;
    float xWeight[3];
    float yWeight[3];
    float zWeight[3];
    float weight;
    float4 coarse;
    float4 refined;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < fineDimX * fineDimY * fineDimZ) {
        z = tid / (fineDimX * fineDimY);
        y = (tid / fineDimX) % fineDimY;
        x = tid % fineDimX;
        // Per axis: the first coarse node, how many the rule uses, and their weights.
        if (x % 2 == 1) {
            xFirst = (x - 1) / 2;
            xCount = 3;
            xWeight[0] = 0.125f;
            xWeight[1] = 0.75f;
            xWeight[2] = 0.125f;
        } else {
            xFirst = x / 2;
            xCount = 2;
            xWeight[0] = 0.5f;
            xWeight[1] = 0.5f;
        }
        if (y % 2 == 1) {
            yFirst = (y - 1) / 2;
            yCount = 3;
            yWeight[0] = 0.125f;
            yWeight[1] = 0.75f;
            yWeight[2] = 0.125f;
        } else {
            yFirst = y / 2;
            yCount = 2;
            yWeight[0] = 0.5f;
            yWeight[1] = 0.5f;
        }
        if (z % 2 == 1) {
            zFirst = (z - 1) / 2;
            zCount = 3;
            zWeight[0] = 0.125f;
            zWeight[1] = 0.75f;
            zWeight[2] = 0.125f;
        } else {
            zFirst = z / 2;
            zCount = 2;
            zWeight[0] = 0.5f;
            zWeight[1] = 0.5f;
        }
        refined = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int c = 0; c < zCount; c++) {
            Z = zFirst + c;
            if (Z > coarseDimZ - 1) {
                Z = coarseDimZ - 1;
            }
            for (int b = 0; b < yCount; b++) {
                Y = yFirst + b;
                if (Y > coarseDimY - 1) {
                    Y = coarseDimY - 1;
                }
                for (int a = 0; a < xCount; a++) {
                    X = xFirst + a;
                    if (X > coarseDimX - 1) {
                        X = coarseDimX - 1;
                    }
                    weight = xWeight[a] * yWeight[b] * zWeight[c];
                    coarse = coarseGrid[(Z * coarseDimY + Y) * coarseDimX + X];
                    refined.x += weight * coarse.x;
                    refined.y += weight * coarse.y;
                    refined.z += weight * coarse.z;
                }
            }
        }
        refined.x = refined.x * displacementScale;
        refined.y = refined.y * displacementScale;
        refined.z = refined.z * displacementScale;
        fineGrid[tid] = refined;
    }
}
