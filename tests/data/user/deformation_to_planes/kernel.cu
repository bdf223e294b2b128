// The inverse layout of planes_to_deformation: a deformation held
// interleaved, three floats a voxel (deformation[3 * i + c]), turned into
// a displacement held as three planes, one image per axis: each voxel's
// position (x, y, z) subtracted. One thread per voxel.
extern "C" __global__ void deformation_to_planes(const float* deformation, int nx, int ny, int nz, float* dx,
                                                 float* dy, float* dz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nx * ny * nz) {
        int x = i % nx;
        int y = (i / nx) % ny;
        int z = i / (nx * ny);
        dx[i] = deformation[3 * i] - (float)x;
        dy[i] = deformation[3 * i + 1] - (float)y;
        dz[i] = deformation[3 * i + 2] - (float)z;
    }
}
