@seed=95010ee8ea4d4a59fdda542c01a03d75fbef15566dbcd6e78ed5804381bc08a2
privatise:<_kernel.cu_228>=262144,fixed coarsen:4,vector
