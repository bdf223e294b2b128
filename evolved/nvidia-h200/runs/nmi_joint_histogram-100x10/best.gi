@seed=95010ee8ea4d4a59fdda542c01a03d75fbef15566dbcd6e78ed5804381bc08a2
define:HIST_PATH=1 <_kernel.cu_177>+<_kernel.cu_206> <_kernel.cu_51>+<_kernel.cu_82> define:HIST_PATH=1 define:HIST_PATH=1 launch_bounds:512,4 define:HIST_PATH=2
