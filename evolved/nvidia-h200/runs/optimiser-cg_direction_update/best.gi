@seed=e2889a729cb65d8b0cb6bce690d92cb626d76556993374909589b39736bfd63e
restrict:conjugateH launch_bounds:1024,1 launch_bounds:512,8 launch_bounds:512 launch_bounds:512 restrict:gradient <if_kernel.cu_17>+<_kernel.cu_18> <_kernel.cu_28>+<_kernel.cu_23> <_kernel.cu_23>+<_kernel.cu_26>
