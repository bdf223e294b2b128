@seed=bb492211cec8e1cd3746fcb42636e9adaa3260b259aba2fffe6616e3e36212ce
define:V2N_PATH=1 unroll:<for_kernel.cu_269>=2 ldg:<_kernel.cu_239> unroll:<for_kernel.cu_287>=4
