@seed=a5409cd01ac891b4ebf01e026acd51b510f4eb5661d5e58b899fc39800cd33eb
define:BSPLINE_ITEMS=4 ldg:<_kernel.cu_283> define:BSPLINE_PATH=2 define:BSPLINE_ITEMS=2 define:BSPLINE_PATH=2 define:BSPLINE_ITEMS=4 define:BSPLINE_PATH=2 ldg:<_kernel.cu_431> define:BSPLINE_PATH=2 <_kernel.cu_394>+<_kernel.cu_158> ldg:<_kernel.cu_283> unroll:<for_kernel.cu_144>=4 restrict:deformationField
