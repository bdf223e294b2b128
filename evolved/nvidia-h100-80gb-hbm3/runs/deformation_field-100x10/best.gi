@seed=a5409cd01ac891b4ebf01e026acd51b510f4eb5661d5e58b899fc39800cd33eb
define:BSPLINE_PATH=2 define:BSPLINE_ITEMS=8 define:BSPLINE_ITEMS=4 <_kernel.cu_356> <_kernel.cu_235><_kernel.cu_272> ldg:<_kernel.cu_147> ldg:<_kernel.cu_88>
