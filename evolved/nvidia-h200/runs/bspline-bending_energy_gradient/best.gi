@seed=0d6018fd7bcede6e9d855302910e1b726f13f8c8f5dcf2f33c79c9f075900ed9
restrict:secondDerivatives launch_bounds:256,2 <_kernel.cu_87>+<_kernel.cu_54> ldg:<_kernel.cu_83>
