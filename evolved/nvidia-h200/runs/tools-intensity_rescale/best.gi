@seed=f9c040024bd66f11c494ec0cc0ff30ca54e7f9dd44782e952ce6d76b7113ddee
ldg:<_kernel.cu_15> coarsen:8,strided <fixed_kernel.cu_17>+<_kernel.cu_13> <if_kernel.cu_14>+<_kernel.cu_15>
