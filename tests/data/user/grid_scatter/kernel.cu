// Voxels added into the node of a coarse grid (spacing voxels a node along
// each axis): the voxel's coordinates come from its index with % and /, and
// each voxel adds its value to its node with atomicAdd.
extern "C" __global__ void grid_scatter(const float* image, int nx, int ny, int nz, int spacing, int gx, int gy,
                                        float* grid) {
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index < nx * ny * nz) {
        const int x = index % nx;
        const int y = (index / nx) % ny;
        const int z = index / (nx * ny);
        atomicAdd(&grid[(z / spacing) * gy * gx + (y / spacing) * gx + x / spacing], image[index]);
    }
}
