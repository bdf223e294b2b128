@seed=a43a27b8c339524e12453e05a29422d7c2aa7601a6e9b60695722ed5caab508c
<if_kernel.cu_57>+<_kernel.cu_49> factor:<for_kernel.cu_71>
