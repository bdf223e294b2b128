@seed=bb492211cec8e1cd3746fcb42636e9adaa3260b259aba2fffe6616e3e36212ce
define:V2N_PATH=1 define:V2N_PATH=1 unroll:<for_kernel.cu_269>=2 define:V2N_PATH=1 ldg:<_kernel.cu_362> ldg:<_kernel.cu_239> restrict:nodeGradient <fixed_kernel.cu_307>+<_kernel.cu_167> <_kernel.cu_277> unroll:<for_kernel.cu_287>=4
