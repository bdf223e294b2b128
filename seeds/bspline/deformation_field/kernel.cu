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

#define BSPLINE_PATH 0  // switch: 0 the plain kernel (one thread per voxel, 64 loads); 1 warp-cooperative columns; 2 row-cached columns; 3 thread per run
#define BSPLINE_ITEMS 1  // switch: paths 2, 3: voxels per thread (consecutive active voxels along x)
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
#if BSPLINE_PATH == 1
    // Warp-cooperative columns (B-spline separability). For a voxel,
    // displacement = sum_a xBasis[a] * S(xPre + a) with
    // S(column) = sum_{b,c} yBasis[b] * zBasis[c] * P(column, yPre + b, zPre + c).
    // Voxels of one image row share y and z, hence S. When every lane of a warp
    // lies in one row, lane j computes S for column xMin + j (16 loads per lane,
    // contiguous across lanes) and each lane gathers its four S values with
    // shuffles: 16 load instructions per warp instead of 64 per voxel. A warp
    // that spans rows takes the plain 64-load path. Lanes past the end stand in
    // for the first active lane so that every lane reaches every shuffle.
    int lane;
    int leader;
    int xLeader;
    int yLeader;
    int zLeader;
    int xMin;
    int xMax;
    unsigned activeMask;
    bool active;
    bool oneRow;
    float columnX;
    float columnY;
    float columnZ;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    lane = threadIdx.x & 31;
    active = tid < activeVoxelNumber;
    activeMask = __ballot_sync(0xffffffffu, active);
    if (activeMask == 0u) {
        return;
    }
    x = 0;
    y = 0;
    z = 0;
    if (active) {
        index = activeVoxels[tid];
        z = index / (imageDimX * imageDimY);
        index = index - z * imageDimX * imageDimY;
        y = index / imageDimX;
        x = index - y * imageDimX;
    }
    leader = __ffs(activeMask) - 1;
    xLeader = __shfl_sync(0xffffffffu, x, leader);
    yLeader = __shfl_sync(0xffffffffu, y, leader);
    zLeader = __shfl_sync(0xffffffffu, z, leader);
    if (!active) {
        x = xLeader;
        y = yLeader;
        z = zLeader;
    }
    gridX = (float)x / spacingX;
    gridY = (float)y / spacingY;
    gridZ = (float)z / spacingZ;
    xPre = (int)floorf(gridX);
    yPre = (int)floorf(gridY);
    zPre = (int)floorf(gridZ);
    bspline_basis(gridX - (float)xPre, xBasis);
    bspline_basis(gridY - (float)yPre, yBasis);
    bspline_basis(gridZ - (float)zPre, zBasis);
    displacementX = 0.0f;
    displacementY = 0.0f;
    displacementZ = 0.0f;
    // Every lane must reach every shuffle: no shuffle inside a short-circuit.
    yLeader = __shfl_sync(0xffffffffu, y, 0);
    zLeader = __shfl_sync(0xffffffffu, z, 0);
    oneRow = __all_sync(0xffffffffu, y == yLeader && z == zLeader);
    xMin = __reduce_min_sync(0xffffffffu, xPre);
    xMax = __reduce_max_sync(0xffffffffu, xPre);
    if (oneRow && xMax - xMin + 4 <= 32) {
        columnX = 0.0f;
        columnY = 0.0f;
        columnZ = 0.0f;
        if (lane < xMax - xMin + 4) {
            for (int c = 0; c < 4; c++) {
                for (int b = 0; b < 4; b++) {
                    controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xMin + lane;
                    controlPoint = controlPointGrid[controlPointIndex];
                    weight = yBasis[b] * zBasis[c];
                    columnX += weight * controlPoint.x;
                    columnY += weight * controlPoint.y;
                    columnZ += weight * controlPoint.z;
                }
            }
        }
        for (int a = 0; a < 4; a++) {
            displacementX += xBasis[a] * __shfl_sync(0xffffffffu, columnX, xPre - xMin + a);
            displacementY += xBasis[a] * __shfl_sync(0xffffffffu, columnY, xPre - xMin + a);
            displacementZ += xBasis[a] * __shfl_sync(0xffffffffu, columnZ, xPre - xMin + a);
        }
    } else {
        for (int c = 0; c < 4; c++) {
            for (int b = 0; b < 4; b++) {
                for (int a = 0; a < 4; a++) {
                    controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xPre + a;
                    controlPoint = controlPointGrid[controlPointIndex];
                    weight = xBasis[a] * yBasis[b] * zBasis[c];
                    displacementX += weight * controlPoint.x;
                    displacementY += weight * controlPoint.y;
                    displacementZ += weight * controlPoint.z;
                }
            }
        }
    }
    if (active) {
        position.x = (float)x + displacementX;
        position.y = (float)y + displacementY;
        position.z = (float)z + displacementZ;
        position.w = 0.0f;
        deformationField[tid] = position;
    }
#elif BSPLINE_PATH == 2
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
#if BSPLINE_TABLE == 1
    xPreTable = (int*)&xWeightTable[imageDimX];
    for (x = threadIdx.x; x < imageDimX; x += blockDim.x) {
        gridX = (float)x / spacingX;
        xPre = (int)floorf(gridX);
        bspline_basis(gridX - (float)xPre, xBasis);
        xWeightTable[x] = make_float4(xBasis[0], xBasis[1], xBasis[2], xBasis[3]);
        xPreTable[x] = xPre;
    }
    __syncthreads();
#endif
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
#if BSPLINE_TABLE == 1
        controlPoint = xWeightTable[x];
        xBasis[0] = controlPoint.x;
        xBasis[1] = controlPoint.y;
        xBasis[2] = controlPoint.z;
        xBasis[3] = controlPoint.w;
        xPre = xPreTable[x];
#else
        gridX = (float)x / spacingX;
        xPre = (int)floorf(gridX);
        bspline_basis(gridX - (float)xPre, xBasis);
#endif
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
#elif BSPLINE_PATH == 3
    // Thread per run of voxels (the thread-per-tile idea of TTLI, along x):
    // a thread handles BSPLINE_ITEMS consecutive active voxels. Voxels of one
    // image row share their y-z weights, and voxels of one control cell share
    // all 64 control points, so the thread keeps the four column sums
    // S(xPre .. xPre + 3) of its current row in registers: the next voxel of
    // the same cell reuses them, the next cell along x shifts them and loads
    // one column (16 loads), anything else loads all four.
    int item;
    int first;
    int row;
    int cachedRow;
    int cachedPre;
    int loads;
    float columnX[4];
    float columnY[4];
    float columnZ[4];
    first = (blockIdx.x * blockDim.x + threadIdx.x) * BSPLINE_ITEMS;
    cachedRow = -1;
    cachedPre = 0;
    for (item = 0; item < BSPLINE_ITEMS; item++) {
        tid = first + item;
        if (tid < activeVoxelNumber) {
            index = activeVoxels[tid];
            row = index / imageDimX;
            x = index - row * imageDimX;
            gridX = (float)x / spacingX;
            xPre = (int)floorf(gridX);
            bspline_basis(gridX - (float)xPre, xBasis);
            if (row != cachedRow) {
                z = row / imageDimY;
                y = row - z * imageDimY;
                gridY = (float)y / spacingY;
                gridZ = (float)z / spacingZ;
                yPre = (int)floorf(gridY);
                zPre = (int)floorf(gridZ);
                bspline_basis(gridY - (float)yPre, yBasis);
                bspline_basis(gridZ - (float)zPre, zBasis);
                cachedRow = row;
                cachedPre = xPre - 4;
            }
            loads = 4;
            if (xPre == cachedPre) {
                loads = 0;
            }
            if (xPre == cachedPre + 1) {
                for (int a = 0; a < 3; a++) {
                    columnX[a] = columnX[a + 1];
                    columnY[a] = columnY[a + 1];
                    columnZ[a] = columnZ[a + 1];
                }
                loads = 1;
            }
            for (int a = 0; a < 4; a++) {
                if (a >= 4 - loads) {
                    columnX[a] = 0.0f;
                    columnY[a] = 0.0f;
                    columnZ[a] = 0.0f;
                    for (int c = 0; c < 4; c++) {
                        for (int b = 0; b < 4; b++) {
                            controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xPre + a;
                            controlPoint = controlPointGrid[controlPointIndex];
                            weight = yBasis[b] * zBasis[c];
                            columnX[a] += weight * controlPoint.x;
                            columnY[a] += weight * controlPoint.y;
                            columnZ[a] += weight * controlPoint.z;
                        }
                    }
                }
            }
            cachedPre = xPre;
            displacementX = 0.0f;
            displacementY = 0.0f;
            displacementZ = 0.0f;
            for (int a = 0; a < 4; a++) {
                displacementX += xBasis[a] * columnX[a];
                displacementY += xBasis[a] * columnY[a];
                displacementZ += xBasis[a] * columnZ[a];
            }
            position.x = (float)x + displacementX;
            position.y = (float)y + displacementY;
            position.z = (float)z + displacementZ;
            position.w = 0.0f;
            deformationField[tid] = position;
        }
    }
#else
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        z = index / (imageDimX * imageDimY);
        index = index - z * imageDimX * imageDimY;
        y = index / imageDimX;
        x = index - y * imageDimX;
        gridX = (float)x / spacingX;
        gridY = (float)y / spacingY;
        gridZ = (float)z / spacingZ;
        xPre = (int)floorf(gridX);
        yPre = (int)floorf(gridY);
        zPre = (int)floorf(gridZ);
        bspline_basis(gridX - (float)xPre, xBasis);
        bspline_basis(gridY - (float)yPre, yBasis);
        bspline_basis(gridZ - (float)zPre, zBasis);
        displacementX = 0.0f;
        displacementY = 0.0f;
        displacementZ = 0.0f;
        for (int c = 0; c < 4; c++) {
            for (int b = 0; b < 4; b++) {
                for (int a = 0; a < 4; a++) {
                    controlPointIndex = ((zPre + c) * controlPointDimY + yPre + b) * controlPointDimX + xPre + a;
                    controlPoint = controlPointGrid[controlPointIndex];
                    weight = xBasis[a] * yBasis[b] * zBasis[c];
                    displacementX += weight * controlPoint.x;
                    displacementY += weight * controlPoint.y;
                    displacementZ += weight * controlPoint.z;
                }
            }
        }
        position.x = (float)x + displacementX;
        position.y = (float)y + displacementY;
        position.z = (float)z + displacementZ;
        position.w = 0.0f;
        deformationField[tid] = position;
    }
#endif
}
