@seed=0d6018fd7bcede6e9d855302910e1b726f13f8c8f5dcf2f33c79c9f075900ed9
launch_bounds:512,1 <_kernel.cu_86>+<_kernel.cu_53> ldg:<_kernel.cu_103>
