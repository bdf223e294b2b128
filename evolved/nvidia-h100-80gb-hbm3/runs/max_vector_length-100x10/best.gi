@seed=45449b4328b6b6cd103a8f40c0cdae7ecdf3afdcfe91677e2b8d3421d7c16ee0
define:MAXLEN_PATH=1 unroll:<for_kernel.cu_45>=-1 define:MAXLEN_ITEMS=4 define:MAXLEN_ITEMS=4 define:MAXLEN_PATH=1 define:MAXLEN_PATH=1 <_kernel.cu_46>+<_kernel.cu_57> ldg:<_kernel.cu_56> unroll:<for_kernel.cu_33>=4 restrict:maxLength launch_bounds:256,4 unroll:<for_kernel.cu_33>=2 define:MAXLEN_PATH=1
