@seed=a5409cd01ac891b4ebf01e026acd51b510f4eb5661d5e58b899fc39800cd33eb
define:BSPLINE_ITEMS=4 define:BSPLINE_PATH=2 ldg:<_kernel.cu_410> <_kernel.cu_287>+<_kernel.cu_108> <_kernel.cu_258><_kernel.cu_216>
