@seed=95010ee8ea4d4a59fdda542c01a03d75fbef15566dbcd6e78ed5804381bc08a2
define:HIST_PATH=2 define:HIST_PATH=2 define:HIST_PATH=2 <_kernel.cu_85><_kernel.cu_84> <_kernel.cu_160> define:HIST_PATH=2 define:HIST_PATH=2 define:HIST_PATH=2 <_kernel.cu_85><_kernel.cu_84> ldg:<_kernel.cu_156>
