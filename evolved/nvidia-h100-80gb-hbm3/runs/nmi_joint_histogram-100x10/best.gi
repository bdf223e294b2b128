@seed=95010ee8ea4d4a59fdda542c01a03d75fbef15566dbcd6e78ed5804381bc08a2
define:HIST_PATH=2 <_kernel.cu_224><_kernel.cu_214> restrict:activeVoxels define:HIST_PATH=2 restrict:warpedImage
