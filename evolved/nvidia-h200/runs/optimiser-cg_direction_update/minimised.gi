@seed=e2889a729cb65d8b0cb6bce690d92cb626d76556993374909589b39736bfd63e
restrict:conjugateH <_kernel.cu_28>+<_kernel.cu_23>
