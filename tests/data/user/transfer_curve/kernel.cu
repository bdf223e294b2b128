// A transfer curve applied to every voxel of an image: the curve is
// piecewise linear through nine control values over [lo, hi], kept in a
// small table, and each voxel looks up the segment its intensity falls in.
// Written as one writes a lookup table: the table is a local array, and
// the segment index comes from the data.
extern "C" __global__ void transfer_curve(const float* image, float lo, float hi, int count, float* out) {
    float table[9];
    table[0] = 0.0f;
    table[1] = 0.02f;
    table[2] = 0.08f;
    table[3] = 0.2f;
    table[4] = 0.45f;
    table[5] = 0.7f;
    table[6] = 0.86f;
    table[7] = 0.95f;
    table[8] = 1.0f;
    int voxel = blockIdx.x * blockDim.x + threadIdx.x;
    if (voxel >= count) return;
    float position = (image[voxel] - lo) / (hi - lo) * 8.0f;
    position = fminf(fmaxf(position, 0.0f), 8.0f);
    int segment = (int)position;
    if (segment > 7) segment = 7;
    float t = position - (float)segment;
    out[voxel] = table[segment] * (1.0f - t) + table[segment + 1] * t;
}
