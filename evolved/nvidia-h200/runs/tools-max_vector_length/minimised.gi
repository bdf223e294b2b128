@seed=45449b4328b6b6cd103a8f40c0cdae7ecdf3afdcfe91677e2b8d3421d7c16ee0
<fixed_kernel.cu_47>+<_kernel.cu_31> define:MAXLEN_PATH=1 define:MAXLEN_ITEMS=4 define:MAXLEN_ITEMS=4 define:MAXLEN_ITEMS=4 define:MAXLEN_PATH=1 <fixed_kernel.cu_41>+<_kernel.cu_31> <_kernel.cu_42><_kernel.cu_36> <decl_kernel.cu_28>+<_kernel.cu_29>
