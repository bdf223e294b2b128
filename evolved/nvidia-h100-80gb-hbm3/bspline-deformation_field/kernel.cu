// Cubic B-spline free-form deformation evaluated at every active voxel.
//
// Everything is in voxel space of the reference image. The control-point grid
// holds displacements (x, y, z; w unused); the output is the deformation, i.e.
// the voxel position plus the interpolated displacement (w = 0), written at
// the active voxel's number, not at its image index.
//
// Grid convention: control point (i, j, k) sits at voxel position
// ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ), i.e. the grid
// starts one spacing before the image origin. A voxel with grid coordinate
// g = x / spacingX and p = floor(g) is then influenced by control points
// p .. p + 3 in each direction, with weights from u = g - p. The grid must
// therefore have at least floor((imageDim - 1) / spacing) + 4 points per
// direction (ceil(imageDim / spacing) + 3 is always enough).

#define BSPLINE_ITEMS 4  // switch: paths 2, 3: voxels per thread (consecutive active voxels along x)
#define BSPLINE_TABLE 0  // switch: path 2: 1 takes the x basis weights from a per-block table in shared memory
__device__ void bspline_basis(float u, float* basis) {
    float u2;
    float u3;
    float v;
    u2 = u * u;
    u3 = u2 * u;
    v = 1.0f - u;
    basis[0] = v * v * v / 6.0f;
    basis[1] = (3.0f * u3 - 6.0f * u2 + 4.0f) / 6.0f;
    basis[2] = (-3.0f * u3 + 3.0f * u2 + 3.0f * u + 1.0f) / 6.0f;
    basis[3] = u3 / 6.0f;
}

extern "C" __global__ void bspline_deformation_field(const float4* controlPointGrid, const int* activeVoxels, int activeVoxelNumber, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float4* deformationField) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int xPre;
    int yPre;
    int zPre;
    int controlPointIndex;
    float gridX;
    float gridY;
    float gridZ;
    float xBasis[4];
    float yBasis[4];
    float zBasis[4];
    float weight;
    float displacementX;
    float displacementY;
    float displacementZ;
    float4 controlPoint;
    float4 position;
    // Row-cached columns (B-spline separability, as path 1, with the column
    // sums kept across voxels). A voxel's displacement is
    // sum_a xBasis[a] * S(xPre + a), with S(column) the y-z weighted sum of the
    // 16 control points of that column for the voxel's image row. A warp
    // handles 32 * BSPLINE_ITEMS consecutive active voxels, 32 at a step;
    // lane j caches S for column cachedColumn + j of cachedRow, and the cache
    // is refilled (16 coalesced loads per lane) only when a voxel needs a row
    // or a column it does not hold: about once per image row, not once per 32
    // voxels. Voxels of several rows in one step are done row by row, the
    // first pending lane choosing the row; it always fits after a refill, so
    // every round finishes at least one lane, whatever the order of the list.
    int lane;
    int step;
    int steps;
    int warpFirst;
    int indices[BSPLINE_ITEMS];
    int row;
    int leader;
    int leaderRow;
    int leaderColumn;
    int cachedRow;
    int cachedColumn;
    int leaderFits;
    unsigned pending;
    unsigned finished;
    bool active;
    bool fits;
    bool mine;
    float columnX;
    float columnY;
    float columnZ;
    float neighbourX;
    float neighbourY;
    float neighbourZ;
    // BSPLINE_TABLE 1: the x weights and xPre of every image column x, computed
    // once per block (launch.shared_bytes gives 20 bytes per x).
    extern __shared__ float4 xWeightTable[];
    int* xPreTable;
    lane = threadIdx.x & 31;
    warpFirst = (blockIdx.x * blockDim.x + threadIdx.x - lane) * BSPLINE_ITEMS;
    // Steps that hold an active voxel (none for an idle warp past the end).
    steps = min(BSPLINE_ITEMS, (activeVoxelNumber - warpFirst + 31) / 32);
    cachedRow = -1;
    cachedColumn = 0;
    columnX = 0.0f;
    columnY = 0.0f;
    columnZ = 0.0f;
    // Every index of the lane loaded first: BSPLINE_ITEMS loads in flight at
    // once instead of one memory latency per step.
#pragma unroll
    for (step = 0; step < BSPLINE_ITEMS; step++) {
        tid = warpFirst + step * 32 + lane;
        indices[step] = 0;
        if (tid < activeVoxelNumber) {
            indices[step] = activeVoxels[tid];
        }
    }
#pragma unroll
    for (step = 0; step < BSPLINE_ITEMS; step++) {
        if (step >= steps) {
            break;
        }
        tid = warpFirst + step * 32 + lane;
        active = tid < activeVoxelNumber;
        pending = __ballot_sync(0xffffffffu, active);
        index = indices[step];
        row = index / imageDimX;
        x = index - row * imageDimX;
        gridX = (float)x / spacingX;
        xPre = (int)floorf(gridX);
        bspline_basis(gridX - (float)xPre, xBasis);
        displacementX = 0.0f;
        displacementY = 0.0f;
        displacementZ = 0.0f;
        position = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        while (pending != 0u) {
            leader = __ffs(pending) - 1;
            fits = row == cachedRow && (unsigned)(xPre - cachedColumn) <= 28u;
            leaderFits = __shfl_sync(0xffffffffu, (int)fits, leader);
            if (leaderFits == 0) {
                leaderRow = __shfl_sync(0xffffffffu, row, leader);
                leaderColumn = __shfl_sync(0xffffffffu, xPre, leader);
                cachedRow = leaderRow;
                cachedColumn = leaderColumn;
                z = leaderRow / imageDimY;
                y = leaderRow - z * imageDimY;
                gridY = (float)y / spacingY;
                gridZ = (float)z / spacingZ;
                yPre = (int)floorf(gridY);
                zPre = (int)floorf(gridZ);
                bspline_basis(gridY - (float)yPre, yBasis);
                bspline_basis(gridZ - (float)zPre, zBasis);
                columnX = 0.0f;
                columnY = 0.0f;
                columnZ = 0.0f;
                if (cachedColumn + lane < controlPointDimX) {
                    for (int c = 0; c < 4; c++) {
                        for (int b = 0; b < 4; b++) {
                            controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + cachedColumn + lane;
                            controlPoint = controlPointGrid[controlPointIndex];
                            weight = yBasis[b] * zBasis[c];
                            columnX += weight * controlPoint.x;
                            columnY += weight * controlPoint.y;
                            columnZ += weight * controlPoint.z;
                        }
                    }
                }
                fits = row == cachedRow && (unsigned)(xPre - cachedColumn) <= 28u;
            }
            // A lane that fits may have finished in an earlier round (doing it
            // again would give the same value): a plain &, no branch.
            mine = fits & (((pending >> lane) & 1u) != 0u);
            finished = __ballot_sync(0xffffffffu, mine);
            for (int a = 0; a < 4; a++) {
                neighbourX = __shfl_sync(0xffffffffu, columnX, xPre - cachedColumn + a);
                neighbourY = __shfl_sync(0xffffffffu, columnY, xPre - cachedColumn + a);
                neighbourZ = __shfl_sync(0xffffffffu, columnZ, xPre - cachedColumn + a);
                displacementX += xBasis[a] * neighbourX;
                displacementY += xBasis[a] * neighbourY;
                displacementZ += xBasis[a] * neighbourZ;
            }
            // y and z are those of cachedRow, the row of every lane finished now.
            if (mine) {
                position.x = (float)x + displacementX;
                position.y = (float)y + displacementY;
                position.z = (float)z + displacementZ;
                position.w = 0.0f;
            }
            displacementX = 0.0f;
            displacementY = 0.0f;
            displacementZ = 0.0f;
            pending = pending & ~finished;
        }
        if (active) {
            deformationField[tid] = position;
        }
    }
}
