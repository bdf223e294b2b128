// The sum of each z slice of a volume (x fastest, then y, then z): the
// voxel's slice is its index divided by the voxels of a slice, and each
// voxel adds its value to its slice's sum with atomicAdd. Neighbouring
// threads share a slice almost always, so the atomics of a warp meet on one
// address while the addresses still differ across the grid.
extern "C" __global__ void slice_sums(const float* volume, int nx, int ny, int nz, float* sums) {
    const int voxels = nx * ny * nz;
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index < voxels) {
        int slice = index / (nx * ny);
        int in_slice = index % (nx * ny);
        float value = volume[slice * nx * ny + in_slice];
        atomicAdd(&sums[slice], value);
    }
}
