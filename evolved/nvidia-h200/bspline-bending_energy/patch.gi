@seed=ca948e131059ab3c38191ac99eeda2c5bffbcd0dc84286e139e5c18cf7db5747
unroll:<for_kernel.cu_81>=4 launch_bounds:256,1 coarsen:2,strided
