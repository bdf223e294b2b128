@seed=124dab8c2f3ad8e53aa64d3bd4afd25f16700ad99d27074dd15871b2b93a0a3a
define:LNCC_TILE=2048 define:LNCC_PATH=1 <_kernel.cu_165>+<_kernel.cu_240> launch_bounds:512,4 <_kernel.cu_186>
