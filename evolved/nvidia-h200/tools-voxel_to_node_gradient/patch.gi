@seed=bb492211cec8e1cd3746fcb42636e9adaa3260b259aba2fffe6616e3e36212ce
define:V2N_PATH=1 unroll:<for_kernel.cu_269>=2 unroll:<for_kernel.cu_262>=8 <_kernel.cu_256>
