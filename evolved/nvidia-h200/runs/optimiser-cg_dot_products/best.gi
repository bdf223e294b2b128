@seed=eee283495e7f047e382b6875f1e3a21f25845e08beb624ddf34ebf6034cea7cb
define:DOT_PATH=1 define:DOT_ITEMS=4 <_kernel.cu_51>+<_kernel.cu_50> ldg:<_kernel.cu_73> launch_bounds:256,1 restrict:sums
