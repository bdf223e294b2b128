@seed=952376605e57f5fcc76f29968e66da060b15437c75a617f85c9b3faef0ec7ecd
ldg:<_kernel.cu_151> ldg:<_kernel.cu_151> launch_bounds:256 unroll:<for_kernel.cu_112>=4 ldg:<_kernel.cu_151> unroll:<for_kernel.cu_111>=4 restrict:jacobianDeterminant unroll:<for_kernel.cu_112>=-1 unroll:<for_kernel.cu_97>=4
