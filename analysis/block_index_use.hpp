#pragma once
// Whether a kernel's work depends on which block runs it. A kernel that reads
// neither blockIdx nor gridDim, in its body, in the __device__ functions it
// calls or in a macro, does the same work in every block: NiftyReg's
// ReduceRigidSums walks its points with `for (k = threadIdx.x; k < count; k
// += blockDim.x)` and sums them in shared memory, once per block. gi init
// launches such a kernel as one block; more would only repeat the work (and
// its atomics), and no guard on a global index could say how many. So is a
// kernel that reads the block index only to single out the grid's first
// thread (`int i = blockIdx.x * blockDim.x + threadIdx.x; if (i == 0) ...`,
// and nowhere else): only block 0 works.
#include <string>

#include "analysis/file_symbols.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct OneBlock {
  bool one_block = false;
  std::string evidence;  // where one_block: what gi read
  std::string why_not;   // else, where the kernel would otherwise qualify: the reason
};

OneBlock one_block_kernel(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                          const IncludedHeaders& headers);

}  // namespace gi::analysis
