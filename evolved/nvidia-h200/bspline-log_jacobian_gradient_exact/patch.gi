@seed=4bc291704e17929193d635503b3fe49ee9e3d123cbd70915ede98c32513f7fc6
define:LJ_PATH=1 unroll:<for_kernel.cu_272>=4 launch_bounds:512,8 define:LJ_TZ=2 <_kernel.cu_165>
