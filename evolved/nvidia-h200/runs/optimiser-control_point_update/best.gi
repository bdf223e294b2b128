@seed=b581d290c33be3922b9131d5a5e01daf6fdedcd0a8416b56e9a82fde63c211aa
<_kernel.cu_15>+<_kernel.cu_17> restrict:bestControlPointGrid ldg:<_kernel.cu_14> launch_bounds:1024,2
