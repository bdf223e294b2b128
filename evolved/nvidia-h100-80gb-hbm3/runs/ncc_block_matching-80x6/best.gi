@seed=1ca6aef67d16a31f8849c2755a2995fdb14226b8f7699c42e897b934968929ec
define:NCC_PATH=1 <_kernel.cu_592>+<_kernel.cu_607> restrict:referenceImage <_kernel.cu_476> launch_bounds:256,8 ldg:<_kernel.cu_721>
