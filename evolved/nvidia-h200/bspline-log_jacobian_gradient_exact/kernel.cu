// Gradient of the exact (voxel-wise) log-Jacobian penalty of a cubic B-spline
// free-form deformation with respect to every control point.
//
// Penalty: sum over the active voxels v of (ln det J_v)^2, J_v the exact
// Jacobian at the voxel (bspline_jacobian_voxels). Its derivative with
// respect to J_v is the per-voxel term T_v = 2 ln(det J_v) J_v^{-T} (zero for
// a folded voxel, det <= 0, whose penalty is a constant), computed by an
// earlier step: voxelTerms[9 * t + 3 * r + c] for the voxel with active
// number t, row-major. voxelToActive maps every image voxel to its active
// number, or -1 when it is not active.
//
// Voxel space, grid convention of bspline_deformation_field: control point
// (i, j, k) sits at voxel ((i - 1) * spacingX, ...); voxel x with
// p = floor(x / spacingX) is influenced by control points p .. p + 3 with
// weights from u = x / spacingX - p. Control point m = p + a receives from
// the voxel T_v w, w = (dB_a(u) B_b(v) B_c(w) / spacingX,
// B_a dB_b / spacingY B_c, B_a B_b dB_c / spacingZ) (B the cubic B-spline
// basis, dB its derivative d/du).
//
// A plain gather: one thread per control point visits the voxels in its
// support (p from m - 3 to m on every axis: about (4 spacing)^3 voxels),
// skips the inactive ones and sums in order, so the result is deterministic.
// Output float4 (x, y, z, w = 0) per control point.

#define LJ_TZ 2  // switch: control points per tile along z, 9 accumulators each per thread (path 1, whose tiles are 8 x 8 control points along x and y; the plain kernel ignores it)
__device__ void bspline_basis_derivative(float u, float* basis, float* derivative) {
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
    derivative[0] = -0.5f * v * v;
    derivative[1] = 1.5f * u2 - 2.0f * u;
    derivative[2] = -1.5f * u2 + u + 0.5f;
    derivative[3] = 0.5f * u2;
}

extern "C" __global__ void __launch_bounds__(1024, 1) bspline_log_jacobian_gradient_exact(const float* voxelTerms, const int* voxelToActive, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, int controlPointNumber, float4* gradient) {
    int tid;
    int index;
    int x;
    int y;
    int z;
    int firstX;
    int firstY;
    int firstZ;
    int lastX;
    int lastY;
    int lastZ;
    int xPre;
    int yPre;
    int zPre;
    int offsetX;
    int offsetY;
    int offsetZ;
    int activeIndex;
    float gridX;
    float gridY;
    float gridZ;
    float xBasis[4];
    float yBasis[4];
    float zBasis[4];
    float xDerivative[4];
    float yDerivative[4];
    float zDerivative[4];
    float weightX;
    float weightY;
    float weightZ;
    float gradientX;
    float gradientY;
    float gradientZ;
    float4 result;
    // Tiled, separable gather. A block owns a tile of 8 x 8 x LJ_TZ
    // control points (partial at the grid's far borders) and visits each
    // voxel of the tile's support once. The voxel's weights are products of
    // per-axis factors, so with T = T_v:
    //   gradient_r = sum_v dBx By Bz T_r0 / sx + Bx dBy Bz T_r1 / sy
    //                + Bx By dBz T_r2 / sz,
    // summed along z, then x, then y. The support is the voxels whose xPre
    // (yPre, zPre) falls in the tile's control points - 3 .. control points:
    // the plain kernel's range, one voxel wider on each side, less the voxels
    // outside it at both ends. The tile's geometry is computed once into
    // shared memory (tile[]) and read back by each phase, which keeps few
    // values live across phases (at most 64 registers a thread, as blocks of
    // 1024 threads need).
    // 0. Tables of the tile's basis values and derivatives per axis (the
    //    voxel's basis computed as the plain kernel does, 0 where the control
    //    point does not reach the voxel).
    // 1. A thread per voxel column (x, y) of the support sums its active
    //    voxels along z for every layer of the tile: T_r0 and T_r1 with Bz,
    //    T_r2 with dBz (9 sums a layer, in registers; consecutive threads read
    //    consecutive voxels; the next voxel's active number is loaded before
    //    the current voxel's terms). The support's rows are taken in batches
    //    of about one column per thread.
    // 2. A thread per (layer, row y, control point x, row r of T) sums the
    //    row's column sums along x: dBx for T_r0, Bx for T_r1 and T_r2; the
    //    T_r0 and T_r2 parts, which take By along y, are added (each over its
    //    spacing).
    // 3. A thread per control point sums the rows along y (By, dBy) and
    //    writes it.
    // Every sum runs in a fixed order: deterministic, no atomics. Dynamic
    // shared memory: the spec's shared_bytes holds the layout below.
    extern __shared__ float tileShared[];
    __shared__ int tile[16];
    float columnZ[9 * LJ_TZ];
    float terms[9];
    int tileX;
    int tileY;
    int tilesX;
    int tilesY;
    int x0;
    int y0;
    int z0;
    int pointsX;
    int pointsY;
    int pointsZ;
    int originX;
    int originY;
    int countX;
    int countY;
    int countZ;
    int capacityX;
    int capacityY;
    int capacityColumns;
    int tableY;
    int tableZ;
    int columnSums;
    int rowSums;
    int rowsPerBatch;
    int rows;
    int row;
    int column;
    int point;
    int layer;
    int term;
    int voxelIndex;
    int nextActive;
    float basisWeight;
    float derivativeWeight;
    tileX = 8;
    tileY = 8;
    if (threadIdx.x == 0) {
        tilesX = (controlPointDimX + tileX - 1) / tileX;
        tilesY = (controlPointDimY + tileY - 1) / tileY;
        x0 = (blockIdx.x % tilesX) * tileX;
        y0 = ((blockIdx.x / tilesX) % tilesY) * tileY;
        z0 = (blockIdx.x / (tilesX * tilesY)) * LJ_TZ;
        pointsX = min(tileX, controlPointDimX - x0);
        pointsY = min(tileY, controlPointDimY - y0);
        pointsZ = min(LJ_TZ, controlPointDimZ - z0);
        firstX = max((int)floorf((float)(x0 - 3) * spacingX) - 1, 0);
        firstY = max((int)floorf((float)(y0 - 3) * spacingY) - 1, 0);
        firstZ = max((int)floorf((float)(z0 - 3) * spacingZ) - 1, 0);
        lastX = min((int)ceilf((float)(x0 + pointsX) * spacingX) + 1, imageDimX - 1);
        lastY = min((int)ceilf((float)(y0 + pointsY) * spacingY) + 1, imageDimY - 1);
        lastZ = min((int)ceilf((float)(z0 + pointsZ) * spacingZ) + 1, imageDimZ - 1);
        for (int n = 0; n < 3; n++) {
            tile[5] = pointsZ;
            firstY += (int)((int)floorf((float)firstY / spacingY) < y0 - 3);
            firstZ += (int)((int)floorf((float)firstZ / spacingZ) < z0 - 3);
            lastX -= (int)((int)floorf((float)lastX / spacingX) >= x0 + pointsX);
            lastY -= (int)((int)floorf((float)lastY / spacingY) >= y0 + pointsY);
            lastZ -= (int)((int)floorf((float)lastZ / spacingZ) >= z0 + pointsZ);
        }
        capacityX = (int)((float)(tileX + 3) * spacingX) + 7;
        capacityY = (int)((float)(tileY + 3) * spacingY) + 7;
        capacityColumns = max((int)blockDim.x, capacityX);
        tile[0] = x0;
        tile[1] = y0;
        tile[2] = z0;
        tile[3] = pointsX;
        tile[4] = pointsY;
        tile[5] = pointsZ;
        tile[6] = firstX;
        tile[7] = firstY;
        tile[8] = firstZ;
        tile[9] = lastX - firstX + 1;
        tile[10] = lastY - firstY + 1;
        tile[11] = lastZ - firstZ + 1;
        tile[12] = capacityX;
        tile[13] = capacityY;
        tile[14] = capacityColumns;
        tile[15] = (int)((float)(LJ_TZ + 3) * spacingZ) + 7;
    }
    __syncthreads();
    x0 = tile[0];
    pointsX = tile[3];
    originX = tile[6];
    countX = tile[9];
    capacityX = tile[12];
    for (int item = threadIdx.x; item < pointsX * countX; item += blockDim.x) {
        point = item / countX;
        column = item - point * countX;
        gridX = (float)(originX + column) / spacingX;
        xPre = (int)floorf(gridX);
        bspline_basis_derivative(gridX - (float)xPre, xBasis, xDerivative);
        offsetX = x0 + point - xPre;
        basisWeight = 0.0f;
        derivativeWeight = 0.0f;
        if (offsetX >= 0 && offsetX <= 3) {
            basisWeight = xBasis[offsetX];
            derivativeWeight = xDerivative[offsetX];
        }
        tileShared[point * capacityX + column] = basisWeight;
        tileShared[(tileX + point) * capacityX + column] = derivativeWeight;
    }
    y0 = tile[1];
    pointsY = tile[4];
    originY = tile[7];
    countY = tile[10];
    capacityY = tile[13];
    tableY = 2 * tileX * capacityX;
    for (int item = threadIdx.x; item < pointsY * countY; item += blockDim.x) {
        point = item / countY;
        row = item - point * countY;
        gridY = (float)(originY + row) / spacingY;
        yPre = (int)floorf(gridY);
        bspline_basis_derivative(gridY - (float)yPre, yBasis, yDerivative);
        offsetY = y0 + point - yPre;
        basisWeight = 0.0f;
        derivativeWeight = 0.0f;
        if (offsetY >= 0 && offsetY <= 3) {
            basisWeight = yBasis[offsetY];
            derivativeWeight = yDerivative[offsetY];
        }
        tileShared[tableY + point * capacityY + row] = basisWeight;
        tileShared[tableY + (tileY + point) * capacityY + row] = derivativeWeight;
    }
    z0 = tile[2];
    countZ = tile[11];
    tableZ = tableY + 2 * tileY * capacityY;
    for (int item = threadIdx.x; item < LJ_TZ * countZ; item += blockDim.x) {
        layer = item % LJ_TZ;
        row = item / LJ_TZ;
        gridZ = (float)(tile[8] + row) / spacingZ;
        zPre = (int)floorf(gridZ);
        bspline_basis_derivative(gridZ - (float)zPre, zBasis, zDerivative);
        offsetZ = z0 + layer - zPre;
        basisWeight = 0.0f;
        derivativeWeight = 0.0f;
        if (offsetZ >= 0 && offsetZ <= 3) {
            basisWeight = zBasis[offsetZ];
            derivativeWeight = zDerivative[offsetZ];
        }
        tileShared[tableZ + 2 * row * LJ_TZ + layer] = basisWeight;
        tileShared[tableZ + (2 * row + 1) * LJ_TZ + layer] = derivativeWeight;
    }
    __syncthreads();
    rowsPerBatch = tile[14] / tile[9];
    for (int rowStart = 0; rowStart < tile[10]; rowStart += rowsPerBatch) {
        countX = tile[9];
        countZ = tile[11];
        capacityColumns = tile[14];
        tableZ = 2 * tileX * tile[12] + 2 * tileY * tile[13];
        columnSums = tableZ + 2 * LJ_TZ * tile[15];
        rows = min(rowsPerBatch, tile[10] - rowStart);
        for (int item = threadIdx.x; item < rows * countX; item += blockDim.x) {
            row = item / countX;
            column = item - row * countX;
            for (int n = 0; n < 9 * LJ_TZ; n++) {
                columnZ[n] = 0.0f;
            }
            voxelIndex = (tile[8] * imageDimY + tile[7] + rowStart + row) * imageDimX + tile[6] + column;
            nextActive = __ldg(&voxelToActive[voxelIndex]);
            #pragma unroll 4
            for (int vz = 0; vz < countZ; vz++) {
                activeIndex = nextActive;
                voxelIndex += imageDimX * imageDimY * min(countZ - 1 - vz, 1);
                nextActive = voxelToActive[voxelIndex];
                if (activeIndex >= 0) {
                    for (int m = 0; m < 9; m++) {
                        terms[m] = voxelTerms[9 * activeIndex + m];
                    }
                    for (int n = 0; n < LJ_TZ; n++) {
                        basisWeight = tileShared[tableZ + 2 * vz * LJ_TZ + n];
                        derivativeWeight = tileShared[tableZ + (2 * vz + 1) * LJ_TZ + n];
                        for (int m = 0; m < 3; m++) {
                            columnZ[9 * n + m] += basisWeight * terms[3 * m + 0];
                            columnZ[9 * n + 3 + m] += basisWeight * terms[3 * m + 1];
                            columnZ[9 * n + 6 + m] += derivativeWeight * terms[3 * m + 2];
                        }
                    }
                }
            }
            for (int n = 0; n < 9 * LJ_TZ; n++) {
                tileShared[columnSums + n * capacityColumns + item] = columnZ[n];
            }
        }
        __syncthreads();
        x0 = tile[0];
        pointsX = tile[3];
        originX = tile[6];
        countX = tile[9];
        capacityX = tile[12];
        capacityY = tile[13];
        capacityColumns = tile[14];
        columnSums = 2 * tileX * capacityX + 2 * tileY * capacityY + 2 * LJ_TZ * tile[15];
        rowSums = columnSums + 9 * LJ_TZ * capacityColumns;
        for (int item = threadIdx.x; item < 3 * LJ_TZ * rows * pointsX; item += blockDim.x) {
            point = item % pointsX;
            row = (item / pointsX) % rows;
            layer = (item / (pointsX * rows)) % LJ_TZ;
            term = item / (pointsX * rows * LJ_TZ);
            firstX = max((int)floorf((float)(x0 + point - 3) * spacingX) - 1 - originX, 0);
            lastX = min((int)ceilf((float)(x0 + point + 1) * spacingX) + 1 - originX, countX - 1);
            gradientX = 0.0f;
            gradientY = 0.0f;
            gradientZ = 0.0f;
            for (int vx = firstX; vx <= lastX; vx++) {
                basisWeight = tileShared[point * capacityX + vx];
                derivativeWeight = tileShared[(tileX + point) * capacityX + vx];
                gradientX += derivativeWeight * tileShared[columnSums + (9 * layer + term) * capacityColumns + row * countX + vx];
                gradientY += basisWeight * tileShared[columnSums + (9 * layer + 3 + term) * capacityColumns + row * countX + vx];
                gradientZ += basisWeight * tileShared[columnSums + (9 * layer + 6 + term) * capacityColumns + row * countX + vx];
            }
            tileShared[rowSums + ((6 * layer + term) * capacityY + rowStart + row) * tileX + point] = gradientX / spacingX + gradientZ / spacingZ;
            tileShared[rowSums + ((6 * layer + 3 + term) * capacityY + rowStart + row) * tileX + point] = gradientY / spacingY;
        }
        __syncthreads();
    }
    x0 = tile[0];
    z0 = tile[2];
    pointsX = tile[3];
    pointsY = tile[4];
    pointsZ = tile[5];
    originY = tile[7];
    countY = tile[10];
    capacityY = tile[13];
    tableY = 2 * tileX * tile[12];
    rowSums = tableY + 2 * tileY * capacityY + 2 * LJ_TZ * tile[15] + 9 * LJ_TZ * tile[14];
    for (int item = threadIdx.x; item < pointsX * pointsY * pointsZ; item += blockDim.x) {
        x = item % pointsX;
        y = (item / pointsX) % pointsY;
        z = item / (pointsX * pointsY);
        firstY = max((int)floorf((float)(y0 + y - 3) * spacingY) - 1 - originY, 0);
        lastY = min((int)ceilf((float)(y0 + y + 1) * spacingY) + 1 - originY, countY - 1);
        gradientX = 0.0f;
        gradientY = 0.0f;
        gradientZ = 0.0f;
        for (int vy = firstY; vy <= lastY; vy++) {
            basisWeight = tileShared[tableY + y * capacityY + vy];
            derivativeWeight = tileShared[tableY + (tileY + y) * capacityY + vy];
            gradientX += basisWeight * tileShared[rowSums + ((6 * z + 0) * capacityY + vy) * tileX + x] + derivativeWeight * tileShared[rowSums + ((6 * z + 3) * capacityY + vy) * tileX + x];
            gradientY += basisWeight * tileShared[rowSums + ((6 * z + 1) * capacityY + vy) * tileX + x] + derivativeWeight * tileShared[rowSums + ((6 * z + 4) * capacityY + vy) * tileX + x];
            gradientZ += basisWeight * tileShared[rowSums + ((6 * z + 2) * capacityY + vy) * tileX + x] + derivativeWeight * tileShared[rowSums + ((6 * z + 5) * capacityY + vy) * tileX + x];
        }
        result.x = gradientX;
        result.y = gradientY;
        result.z = gradientZ;
        result.w = 0.0f;
        gradient[((z0 + z) * controlPointDimY + y0 + y) * controlPointDimX + x0 + x] = result;
    }
}
