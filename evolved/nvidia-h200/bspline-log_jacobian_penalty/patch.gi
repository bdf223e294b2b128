@seed=e3fb80432739f0e0ae6eb5a176c5af8478627a24290d80073300b996811d5d34
registers:<decl_kernel.cu_30>=derivative registers:<decl_kernel.cu_29>=basis
