@seed=e2889a729cb65d8b0cb6bce690d92cb626d76556993374909589b39736bfd63e
<_kernel.cu_19>+<_kernel.cu_24> <_kernel.cu_28>+<_kernel.cu_18> <_kernel.cu_19>+<_kernel.cu_30> restrict:conjugateH
