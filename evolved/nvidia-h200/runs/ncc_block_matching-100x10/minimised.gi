@seed=1ca6aef67d16a31f8849c2755a2995fdb14226b8f7699c42e897b934968929ec
launch_bounds:512,4 define:NCC_PATH=1 unroll:<for_kernel.cu_277>=2
