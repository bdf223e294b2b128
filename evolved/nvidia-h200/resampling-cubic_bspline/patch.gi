@seed=160235f601256f7359ac5b94474d95fa1deb843e8675e229645be14afc546efe
factor:<for_kernel.cu_65> ldg:<_kernel.cu_68>
