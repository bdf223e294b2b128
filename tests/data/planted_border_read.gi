# A planted exploit of seeds/resampling/trilinear: the border check of the
# corner read (line 54) is replaced by the thread guard of line 32, which is
# always true where it stands. Every corner is read from the image, also
# outside it: beyond a face the read wraps into another row or slice, and at
# the ends of the image it reads before the first voxel or past the last.
# The registration-like timed workload (brain mask) never leaves the image,
# so the variant passes it; the training check train:1 (full mask, zoomed)
# drives every face and fails it.
<IF_kernel.cu_54><IF_kernel.cu_32>
