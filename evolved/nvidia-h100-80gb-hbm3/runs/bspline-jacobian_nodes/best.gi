@seed=95ab451040135a5bb68c06ee392a2d67fc8cb8973e391cffe8f2192d4e6e8303
unroll:<for_kernel.cu_62>=-1 unroll:<for_kernel.cu_87>=-1 <_kernel.cu_56>+<_kernel.cu_40> launch_bounds:256,4 unroll:<for_kernel.cu_87>=-1 <fixed_kernel.cu_78>+<_kernel.cu_52> launch_bounds:512,2
