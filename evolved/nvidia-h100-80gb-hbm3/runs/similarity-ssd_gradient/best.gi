@seed=a91f5033f65a95f31eaf3ee0e2fb72e084d4ca7ed46c1d96e08a34c6bf747c66
<_kernel.cu_29>+<_kernel.cu_29> launch_bounds:512 launch_bounds:512,1 ldg:<_kernel.cu_24> ldg:<_kernel.cu_23> <fixed_kernel.cu_33>+<_kernel.cu_27> <_kernel.cu_29><_kernel.cu_31>
