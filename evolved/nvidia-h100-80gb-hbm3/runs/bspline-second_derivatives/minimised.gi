@seed=5478af56fafb8c13879d7d4e53bc1338994b5ec8d1c6b7ab4c7a9435b818446c
unroll:<for_kernel.cu_79>=-1 launch_bounds:256,1
