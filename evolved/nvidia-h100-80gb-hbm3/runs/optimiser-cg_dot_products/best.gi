@seed=eee283495e7f047e382b6875f1e3a21f25845e08beb624ddf34ebf6034cea7cb
define:DOT_ITEMS=4 define:DOT_ITEMS=4 define:DOT_PATH=1 ldg:<_kernel.cu_73> ldg:<_kernel.cu_38> define:DOT_PATH=1 define:DOT_ITEMS=4 define:DOT_ITEMS=4 define:DOT_ITEMS=4 define:DOT_ITEMS=4 define:DOT_PATH=1 unroll:<for_kernel.cu_57>=1 <_kernel.cu_51>+<_kernel.cu_50>
