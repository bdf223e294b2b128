// A dense deformation from a displacement held as three planes (one image per
// axis): the voxel (x, y, z) of number i moves to its own position plus its
// displacement, written interleaved, three floats a voxel,
// deformation[3 * i + c], the layout a resampler reads. One thread per voxel.
extern "C" __global__ void planes_to_deformation(const float* dx, const float* dy, const float* dz, int nx, int ny,
                                                 int nz, float* deformation) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nx * ny * nz) {
        int x = i % nx;
        int y = (i / nx) % ny;
        int z = i / (nx * ny);
        deformation[3 * i] = (float)x + dx[i];
        deformation[3 * i + 1] = (float)y + dy[i];
        deformation[3 * i + 2] = (float)z + dz[i];
    }
}
