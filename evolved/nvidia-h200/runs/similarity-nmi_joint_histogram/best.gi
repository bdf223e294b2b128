@seed=95010ee8ea4d4a59fdda542c01a03d75fbef15566dbcd6e78ed5804381bc08a2
ldg:<_kernel.cu_156> define:HIST_PATH=2 define:HIST_PATH=2 launch_bounds:512 <_kernel.cu_228>+<_kernel.cu_175>
