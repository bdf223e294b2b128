@seed=124dab8c2f3ad8e53aa64d3bd4afd25f16700ad99d27074dd15871b2b93a0a3a
define:LNCC_PATH=1 define:LNCC_TILE=2048 ldg:<_kernel.cu_208> launch_bounds:1024,2
