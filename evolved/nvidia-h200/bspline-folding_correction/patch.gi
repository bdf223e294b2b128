@seed=952376605e57f5fcc76f29968e66da060b15437c75a617f85c9b3faef0ec7ecd
registers:<decl_kernel.cu_45>=zFirst registers:<decl_kernel.cu_42>=basis factor:<for_kernel.cu_113> registers:<decl_kernel.cu_44>=yFirst
