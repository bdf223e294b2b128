@seed=ca948e131059ab3c38191ac99eeda2c5bffbcd0dc84286e139e5c18cf7db5747
unroll:<for_kernel.cu_81>=-1 <_kernel.cu_105>+<_kernel.cu_64> <_kernel.cu_70>+<_kernel.cu_64> restrict:bendingEnergy coarsen:2,strided launch_bounds:64,2 <_kernel.cu_88>+<_kernel.cu_49>
