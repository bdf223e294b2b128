@seed=030943bf83d37fc18dcda120e9c6b20ea9fa784e4ae1218c3e809914a0724999
define:BSPLINE_PATH=1 define:BSPLINE_PATH=1 define:BSPLINE_PATH=1 define:BSPLINE_PATH=1 define:BSPLINE_PATH=1 <decl_kernel.cu_44>+<_kernel.cu_107> <_kernel.cu_115><_kernel.cu_171> ldg:<_kernel.cu_185> <_kernel.cu_137>+<_kernel.cu_99> restrict:controlPointGrid ldg:<_kernel.cu_127> define:BSPLINE_PATH=1
