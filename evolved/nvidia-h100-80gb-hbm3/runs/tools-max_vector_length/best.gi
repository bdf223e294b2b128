@seed=45449b4328b6b6cd103a8f40c0cdae7ecdf3afdcfe91677e2b8d3421d7c16ee0
define:MAXLEN_ITEMS=4 <_kernel.cu_31>+<_kernel.cu_56> define:MAXLEN_ITEMS=16 define:MAXLEN_ITEMS=4 define:MAXLEN_PATH=1 restrict:field restrict:maxLength launch_bounds:128,4 launch_bounds:128,8 ldg:<_kernel.cu_56> ldg:<_kernel.cu_56> launch_bounds:512,4 define:MAXLEN_PATH=1 define:MAXLEN_ITEMS=4 define:MAXLEN_PATH=1
