@seed=ca948e131059ab3c38191ac99eeda2c5bffbcd0dc84286e139e5c18cf7db5747
restrict:bendingEnergy restrict:bendingEnergy unroll:<for_kernel.cu_81>=4 restrict:controlPointGrid <for_kernel.cu_83>+<_kernel.cu_98> restrict:bendingEnergy restrict:bendingEnergy unroll:<for_kernel.cu_83>=4 launch_bounds:256,1 launch_bounds:64,2 unroll:<for_kernel.cu_82>=0 coarsen:2,strided
