@seed=030943bf83d37fc18dcda120e9c6b20ea9fa784e4ae1218c3e809914a0724999
define:BSPLINE_PATH=1 <_kernel.cu_137>+<_kernel.cu_99>
