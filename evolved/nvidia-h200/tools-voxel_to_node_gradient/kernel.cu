// Voxel-centric to node-centric gradient: the gradient of a voxel-wise
// similarity with respect to the B-spline control points.
//
// One thread per control point (node). The input is a voxel-based gradient
// field (x, y, z per voxel; w is never read). Node n receives the weighted sum
// of the gradient over the voxels in its support, each voxel weighted by the
// product of the cubic B-spline basis values with which the node influences
// that voxel in the deformation: this is the exact adjoint (transpose) of
// B-spline interpolation. The sum is NOT normalised (neither by the number of
// voxels nor by the sum of the weights): a caller that wants a normalised
// gradient scales it afterwards (the conjugate-gradient step normalises by
// the maximal length anyway). Output w is 0.
//
// Grid convention (as bspline_deformation_field): control point (i, j, k)
// sits at voxel ((i - 1) * spacingX, (j - 1) * spacingY, (k - 1) * spacingZ).
// A voxel x with xPre = floor(x / spacingX) is influenced by nodes
// xPre .. xPre + 3 with the basis values of u = x / spacingX - xPre, so node i
// receives the voxels with xPre in i - 3 .. i, i.e. x in
// [(i - 3) * spacingX, (i + 1) * spacingX). The loops below scan one voxel more
// on each side (clipped to the image) and skip the voxels whose xPre falls
// outside that range, so rounding of the float bounds cannot drop a voxel.

#define V2N_TY 8  // switch: nodes per tile along y (path 1, whose tiles are 8 nodes wide along x; the plain kernel ignores it)
#define V2N_TZ 4  // switch: nodes per tile along z, accumulators per thread (path 1; the plain kernel ignores it)
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

extern "C" __global__ void voxel_to_node_gradient(const float4* voxelGradient, int imageDimX, int imageDimY, int imageDimZ, int controlPointDimX, int controlPointDimY, int controlPointDimZ, float spacingX, float spacingY, float spacingZ, float4* nodeGradient) {
    int tid;
    int controlPointNumber;
    int i;
    int j;
    int k;
    int xFirst;
    int xLast;
    int yFirst;
    int yLast;
    int zFirst;
    int zLast;
    int xPre;
    int yPre;
    int zPre;
    int a;
    int b;
    int c;
    int voxelIndex;
    float gridX;
    float gridY;
    float gridZ;
    float xBasis[4];
    float yBasis[4];
    float zBasis[4];
    float weight;
    float sumX;
    float sumY;
    float sumZ;
    float4 gradient;
    float4 result;
    // Tiled, separable gather. A block owns a tile of 8 x V2N_TY x V2N_TZ
    // nodes (partial at the grid's far borders) and visits each voxel of the
    // tile's support once: the B-spline weight of node (i, j, k) at voxel
    // (x, y, z) is wx(i, x) wy(j, y) wz(k, z), so the node sum is a sum along
    // z, then x, then y. The support is the voxels whose xPre (yPre, zPre)
    // falls in the tile's nodes - 3 .. nodes: the plain kernel's range, one
    // voxel wider on each side, less the voxels outside it at both ends.
    // The tile's geometry is computed once into shared memory (tile[]) and
    // read back by each phase, which keeps few values live across phases
    // (at most 64 registers a thread, as blocks of 1024 threads need).
    // 0. Tables of the tile's weights per axis (the voxel's basis computed as
    //    the plain kernel does, 0 where the node does not reach the voxel).
    // 1. A thread per voxel column (x, y) of the support sums the column along
    //    z for every node layer k of the tile (3 V2N_TZ sums in registers;
    //    consecutive threads read consecutive voxels). The support's rows are
    //    taken in batches of about one column per thread.
    // 2. A thread per (layer k and component, row y, node i) sums the row's
    //    column sums along x into the row buffer.
    // 3. A thread per node sums the row buffer along y and writes the node.
    // Every sum runs in a fixed order: deterministic, no atomics. Dynamic
    // shared memory: the spec's shared_bytes holds the layout below.
    extern __shared__ float tileShared[];
    __shared__ int tile[16];
    float columnZ[3 * V2N_TZ];
    int tileX;
    int tilesX;
    int tilesY;
    int i0;
    int j0;
    int k0;
    int nodesX;
    int nodesY;
    int nodesZ;
    int countX;
    int countY;
    int countZ;
    int capacityX;
    int capacityY;
    int capacityColumns;
    int weightY;
    int weightZ;
    int columnSums;
    int rowSums;
    int rowsPerBatch;
    int rows;
    int row;
    int column;
    int node;
    int field;
    int first;
    int last;
    float w;
    tileX = 8;
    if (threadIdx.x == 0) {
        tilesX = (controlPointDimX + tileX - 1) / tileX;
        tilesY = (controlPointDimY + V2N_TY - 1) / V2N_TY;
        i0 = (blockIdx.x % tilesX) * tileX;
        j0 = ((blockIdx.x / tilesX) % tilesY) * V2N_TY;
        k0 = (blockIdx.x / (tilesX * tilesY)) * V2N_TZ;
        nodesX = min(tileX, controlPointDimX - i0);
        nodesY = min(V2N_TY, controlPointDimY - j0);
        nodesZ = min(V2N_TZ, controlPointDimZ - k0);
        xFirst = max((int)floorf((float)(i0 - 3) * spacingX) - 1, 0);
        yFirst = max((int)floorf((float)(j0 - 3) * spacingY) - 1, 0);
        zFirst = max((int)floorf((float)(k0 - 3) * spacingZ) - 1, 0);
        xLast = min((int)ceilf((float)(i0 + nodesX) * spacingX) + 1, imageDimX - 1);
        yLast = min((int)ceilf((float)(j0 + nodesY) * spacingY) + 1, imageDimY - 1);
        zLast = min((int)ceilf((float)(k0 + nodesZ) * spacingZ) + 1, imageDimZ - 1);
        for (int n = 0; n < 3; n++) {
            xFirst += (int)((int)floorf((float)xFirst / spacingX) < i0 - 3);
            yFirst += (int)((int)floorf((float)yFirst / spacingY) < j0 - 3);
            zFirst += (int)((int)floorf((float)zFirst / spacingZ) < k0 - 3);
            xLast -= (int)((int)floorf((float)xLast / spacingX) >= i0 + nodesX);
            yLast -= (int)((int)floorf((float)yLast / spacingY) >= j0 + nodesY);
            zLast -= (int)((int)floorf((float)zLast / spacingZ) >= k0 + nodesZ);
        }
        capacityX = (int)((float)(tileX + 3) * spacingX) + 7;
        capacityY = (int)((float)(V2N_TY + 3) * spacingY) + 7;
        capacityColumns = max((int)blockDim.x, capacityX);
        tile[0] = i0;
        tile[1] = j0;
        tile[2] = k0;
        tile[3] = nodesX;
        tile[4] = nodesY;
        tile[5] = nodesZ;
        tile[6] = xFirst;
        tile[7] = yFirst;
        tile[8] = zFirst;
        tile[9] = xLast - xFirst + 1;
        tile[10] = yLast - yFirst + 1;
        tile[11] = zLast - zFirst + 1;
        tile[12] = capacityX;
        tile[13] = capacityY;
        tile[14] = capacityColumns;
        tile[15] = (int)((float)(V2N_TZ + 3) * spacingZ) + 7;
    }
    __syncthreads();
    i0 = tile[0];
    nodesX = tile[3];
    xFirst = tile[6];
    countX = tile[9];
    capacityX = tile[12];
    for (int item = threadIdx.x; item < nodesX * countX; item += blockDim.x) {
        node = item / countX;
        column = item - node * countX;
        gridX = (float)(xFirst + column) / spacingX;
        xPre = (int)floorf(gridX);
        bspline_basis(gridX - (float)xPre, xBasis);
        a = i0 + node - xPre;
        w = 0.0f;
        if (a >= 0 && a < 4) {
            w = xBasis[a];
        }
        tileShared[node * capacityX + column] = w;
    }
    j0 = tile[1];
    nodesY = tile[4];
    yFirst = tile[7];
    countY = tile[10];
    capacityY = tile[13];
    weightY = tileX * capacityX;
    for (int item = threadIdx.x; item < nodesY * countY; item += blockDim.x) {
        node = item / countY;
        row = item - node * countY;
        gridY = (float)(yFirst + row) / spacingY;
        yPre = (int)floorf(gridY);
        bspline_basis(gridY - (float)yPre, yBasis);
        b = j0 + node - yPre;
        w = 0.0f;
        if (b >= 0 && b < 4) {
            w = yBasis[b];
        }
        tileShared[weightY + node * capacityY + row] = w;
    }
    k0 = tile[2];
    zFirst = tile[8];
    countZ = tile[11];
    weightZ = weightY + V2N_TY * capacityY;
    for (int item = threadIdx.x; item < V2N_TZ * countZ; item += blockDim.x) {
        node = item % V2N_TZ;
        row = item / V2N_TZ;
        gridZ = (float)(zFirst + row) / spacingZ;
        zPre = (int)floorf(gridZ);
        bspline_basis(gridZ - (float)zPre, zBasis);
        c = k0 + node - zPre;
        w = 0.0f;
        if (c >= 0 && c < 4) {
            w = zBasis[c];
        }
        tileShared[weightZ + item] = w;
    }
    __syncthreads();
    rowsPerBatch = tile[14] / tile[9];
    for (int rowStart = 0; rowStart < tile[10]; rowStart += rowsPerBatch) {
        countX = tile[9];
        countZ = tile[11];
        capacityColumns = tile[14];
        weightZ = tileX * tile[12] + V2N_TY * tile[13];
        columnSums = weightZ + V2N_TZ * tile[15];
        rows = min(rowsPerBatch, tile[10] - rowStart);
        for (int item = threadIdx.x; item < rows * countX; item += blockDim.x) {
            row = item / countX;
            column = item - row * countX;
            for (int n = 0; n < 3 * V2N_TZ; n++) {
                columnZ[n] = 0.0f;
            }
            voxelIndex = (tile[8] * imageDimY + tile[7] + rowStart + row) * imageDimX + tile[6] + column;
            for (int z = 0; z < countZ; z++) {
                gradient = voxelGradient[voxelIndex];
                voxelIndex += imageDimX * imageDimY;
                for (int n = 0; n < V2N_TZ; n++) {
                    w = tileShared[weightZ + z * V2N_TZ + n];
                    columnZ[3 * n + 0] += w * gradient.x;
                    columnZ[3 * n + 1] += w * gradient.y;
                    columnZ[3 * n + 2] += w * gradient.z;
                }
            }
            for (int n = 0; n < 3 * V2N_TZ; n++) {
                tileShared[columnSums + n * capacityColumns + item] = columnZ[n];
            }
        }
        __syncthreads();
        i0 = tile[0];
        nodesX = tile[3];
        xFirst = tile[6];
        capacityX = tile[12];
        capacityY = tile[13];
        capacityColumns = tile[14];
        columnSums = tileX * capacityX + V2N_TY * capacityY + V2N_TZ * tile[15];
        rowSums = columnSums + 3 * V2N_TZ * capacityColumns;
        #pragma unroll 8
        for (int item = threadIdx.x; item < 3 * V2N_TZ * rows * nodesX; item += blockDim.x) {
            node = item % nodesX;
            row = (item / nodesX) % rows;
            field = item / (nodesX * rows);
            first = max((int)floorf((float)(i0 + node - 3) * spacingX) - 1 - xFirst, 0);
            last = min((int)ceilf((float)(i0 + node + 1) * spacingX) + 1 - xFirst, countX - 1);
            sumX = 0.0f;
            #pragma unroll 2
            for (int x = first; x <= last; x++) {
                sumX += tileShared[node * capacityX + x] * tileShared[columnSums + field * capacityColumns + row * countX + x];
            }
            tileShared[rowSums + (field * capacityY + rowStart + row) * tileX + node] = sumX;
        }
        __syncthreads();
    }
    i0 = tile[0];
    j0 = tile[1];
    k0 = tile[2];
    nodesX = tile[3];
    nodesY = tile[4];
    nodesZ = tile[5];
    yFirst = tile[7];
    countY = tile[10];
    capacityY = tile[13];
    weightY = tileX * tile[12];
    rowSums = weightY + V2N_TY * capacityY + V2N_TZ * tile[15] + 3 * V2N_TZ * tile[14];
    for (int item = threadIdx.x; item < nodesX * nodesY * nodesZ; item += blockDim.x) {
        i = item % nodesX;
        j = (item / nodesX) % nodesY;
        k = item / (nodesX * nodesY);
        first = max((int)floorf((float)(j0 + j - 3) * spacingY) - 1 - yFirst, 0);
        last = min((int)ceilf((float)(j0 + j + 1) * spacingY) + 1 - yFirst, countY - 1);
        sumX = 0.0f;
        sumY = 0.0f;
        sumZ = 0.0f;
        for (int y = first; y <= last; y++) {
            w = tileShared[weightY + j * capacityY + y];
            sumX += w * tileShared[rowSums + ((3 * k + 0) * capacityY + y) * tileX + i];
            sumY += w * tileShared[rowSums + ((3 * k + 1) * capacityY + y) * tileX + i];
            sumZ += w * tileShared[rowSums + ((3 * k + 2) * capacityY + y) * tileX + i];
        }
        result.x = sumX;
        result.y = sumY;
        result.z = sumZ;
        result.w = 0.0f;
        nodeGradient[((k0 + k) * controlPointDimY + j0 + j) * controlPointDimX + i0 + i] = result;
    }
}
