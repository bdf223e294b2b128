@seed=924ce677296c2043bba774fc35177df06fb3d56004a0ad54e9d7c726313cca02
ldg:<_kernel.cu_53> launch_bounds:256 unroll:<for_kernel.cu_74>=8
