@seed=e2889a729cb65d8b0cb6bce690d92cb626d76556993374909589b39736bfd63e
restrict:conjugateH restrict:gradient <_kernel.cu_28>+<_kernel.cu_23> restrict:gradient <_kernel.cu_28><_kernel.cu_30> restrict:gradient <_kernel.cu_22>+<_kernel.cu_21> <_kernel.cu_28> <_kernel.cu_25>+<_kernel.cu_23> launch_bounds:1024,4 restrict:gradient
