@seed=4cc8ba6ca7d6eb1168f4fb4274765068b8dd2112b950393118ef737424e85fad
unroll:<for_kernel.cu_39>=4 unroll:<for_kernel.cu_36>=4
