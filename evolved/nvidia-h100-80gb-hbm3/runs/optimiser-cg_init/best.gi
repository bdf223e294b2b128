@seed=2ccb017241c7c5122ba23654bfc4b5f22b8b68563a575477b8fdf664471f919c
<_kernel.cu_14>+<_kernel.cu_13> restrict:gradient restrict:conjugateH ldg:<_kernel.cu_13> restrict:gradient
