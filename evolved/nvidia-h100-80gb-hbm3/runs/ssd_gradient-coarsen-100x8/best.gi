@seed=a91f5033f65a95f31eaf3ee0e2fb72e084d4ca7ed46c1d96e08a34c6bf747c66
<_kernel.cu_32>+<_kernel.cu_28> restrict:activeVoxels ldg:<_kernel.cu_24> restrict:ssdGradient
