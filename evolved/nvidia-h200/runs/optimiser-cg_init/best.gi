@seed=2ccb017241c7c5122ba23654bfc4b5f22b8b68563a575477b8fdf664471f919c
ldg:<_kernel.cu_13> <_kernel.cu_17>+<_kernel.cu_14> ldg:<_kernel.cu_13> restrict:conjugateG ldg:<_kernel.cu_13> ldg:<_kernel.cu_13> <_kernel.cu_14><_kernel.cu_13> ldg:<_kernel.cu_13> restrict:conjugateG ldg:<_kernel.cu_13> ldg:<_kernel.cu_13> launch_bounds:512,2
