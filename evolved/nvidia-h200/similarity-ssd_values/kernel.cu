// Sum of squared differences, per voxel: the squared difference between the
// reference image and the warped (resampled floating) image at every active
// voxel.
//
// activeVoxels[i] is the linear index (x + dimX * (y + dimY * z)) of active
// voxel i in both images. The value (reference - warped)^2 is written to
// ssdValues[activeVoxels[i]]: the output is an image on the reference grid,
// and elements of non-active voxels are not written (they keep whatever the
// caller put there). The SSD itself is the sum of these values.

extern "C" __global__ void similarity_ssd_values(const float* referenceImage, const float* warpedImage, const int* activeVoxels, int activeVoxelNumber, float* ssdValues) {
    int tid;
    int index;
    float referenceValue;
    float warpedValue;
    float difference;
    tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < activeVoxelNumber) {
        index = activeVoxels[tid];
        referenceValue = referenceImage[index];
        warpedValue = warpedImage[index];
        difference = referenceValue - warpedValue;
        ssdValues[index] = difference * difference;
    }
}
