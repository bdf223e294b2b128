@seed=bb492211cec8e1cd3746fcb42636e9adaa3260b259aba2fffe6616e3e36212ce
define:V2N_PATH=1 define:V2N_PATH=1 ldg:<_kernel.cu_362> ldg:<_kernel.cu_362> ldg:<_kernel.cu_362> <_kernel.cu_140> ldg:<_kernel.cu_239> unroll:<for_kernel.cu_139>=0 restrict:voxelGradient restrict:nodeGradient unroll:<for_kernel.cu_262>=8
