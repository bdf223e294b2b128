@seed=4bc291704e17929193d635503b3fe49ee9e3d123cbd70915ede98c32513f7fc6
define:LJ_TZ=2 unroll:<for_kernel.cu_272>=4 launch_bounds:1024,1 define:LJ_PATH=1 <_kernel.cu_328> ldg:<_kernel.cu_271> <_kernel.cu_165><_kernel.cu_180>
