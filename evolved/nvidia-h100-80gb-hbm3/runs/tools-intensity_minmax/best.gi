@seed=bfa8b919b664e800bd181033387e27dda6c3e7f78c82129f2f394116084daffd
define:MINMAX_PATH=1 define:MINMAX_ITEMS=8 launch_bounds:1024,4 unroll:<for_kernel.cu_79>=2 unroll:<for_kernel.cu_49>=2
