@seed=bb7372540925af5601eb19916eb7771d5fdf5411ad04ac74b9aedefd320d9080
define:CONV_ITEMS=8 define:CONV_PATH=1 <_kernel.cu_135><_kernel.cu_100> <_kernel.cu_121><_kernel.cu_99> <_kernel.cu_129><_kernel.cu_115> <_kernel.cu_91>+<_kernel.cu_51> restrict:output
