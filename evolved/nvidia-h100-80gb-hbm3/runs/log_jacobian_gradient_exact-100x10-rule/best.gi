@seed=4bc291704e17929193d635503b3fe49ee9e3d123cbd70915ede98c32513f7fc6
define:LJ_PATH=1 <_kernel.cu_286>+<_kernel.cu_263> ldg:<_kernel.cu_278> ldg:<_kernel.cu_275> define:LJ_PATH=1 define:LJ_TZ=2 define:LJ_TZ=2 <fixed_kernel.cu_210>+<_kernel.cu_217> restrict:gradient
