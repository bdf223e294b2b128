// Voxel-based gradient of the sum of squared differences with respect to
// the deformation: for active voxel i,
//     ssdGradient[i] = -2 (reference - warped) * grad(warped)
// where grad(warped) is the gradient of the warped image with respect to the
// sampling position (the derivative of the interpolant, in floating voxel
// units), one float4 per active voxel.
//
// activeVoxels[i] is the linear index (x + dimX * (y + dimY * z)) of active
// voxel i in the reference and warped images. warpedGradient and
// ssdGradient are indexed by the active voxel number i, not by the image
// index. Only x, y and z of warpedGradient are read; the output w is 0.

extern "C" __global__ void similarity_ssd_gradient(const float* referenceImage, const float* warpedImage, const float4* warpedGradient, const int* activeVoxels, int activeVoxelNumber, float4* ssdGradient) {
    int tid;
    int index;
    float referenceValue;
    float warpedValue;
    float common;
    float4 gradient;
    float4 result;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        referenceValue = referenceImage[index];
        warpedValue = warpedImage[index];
        common = -2.0f * (referenceValue - warpedValue);
        gradient = warpedGradient[tid];
        result.x = common * gradient.x;
        result.y = common * gradient.y;
        result.z = common * gradient.z;
        result.w = 0.0f;
        ssdGradient[tid] = result;
    }
}
