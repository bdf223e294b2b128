@seed=5478af56fafb8c13879d7d4e53bc1338994b5ec8d1c6b7ab4c7a9435b818446c
restrict:secondDerivatives restrict:controlPointGrid restrict:secondDerivatives ldg:<_kernel.cu_83> ldg:<_kernel.cu_83> ldg:<_kernel.cu_83> restrict:controlPointGrid <fixed_kernel.cu_110>+<_kernel.cu_60>
