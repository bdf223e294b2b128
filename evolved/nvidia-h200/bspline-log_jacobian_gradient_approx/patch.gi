@seed=367ee406d06311a8faf7b94b69ff33b7c14cbdc06097dd36424708c71e2f7af5
unroll:<for_kernel.cu_61>=-1 <if_kernel.cu_82>+<_kernel.cu_77>
