@seed=45449b4328b6b6cd103a8f40c0cdae7ecdf3afdcfe91677e2b8d3421d7c16ee0
define:MAXLEN_PATH=1 restrict:field define:MAXLEN_ITEMS=4 <_kernel.cu_44> define:MAXLEN_PATH=1 restrict:maxLength ldg:<_kernel.cu_34>
