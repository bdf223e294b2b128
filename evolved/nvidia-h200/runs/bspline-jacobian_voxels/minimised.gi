@seed=5be76a48c6e1b5ccc356b20b781adb6d3f9c2163b0f55c19ea1b29fc0fd56f48
ldg:<_kernel.cu_81> coarsen:2 unroll:<for_kernel.cu_77>=4
