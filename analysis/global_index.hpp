#pragma once
// The global thread index line, `tid = blockIdx.x * blockDim.x + threadIdx.x;`
// in one of its usual spellings: where one-thread-per-item kernels say which
// item a thread has. The families that change how threads map to items find
// it here (coarsen: K items per thread; warp_per_item: G threads per item).
#include <cstddef>
#include <optional>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

// Whether tokens [first, last] (comments skipped) spell the global index:
// blockIdx.x * blockDim.x + threadIdx.x, its factors or terms in either order,
// or the index over blocks numbered across a 2-D grid (below).
bool is_global_index(const grammar::ParsedKernel& k, std::size_t first, std::size_t last);

// `(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x`, which
// kernels write to launch more blocks than one grid row held on old GPUs
// (NiftyReg's): the block's number is `blockIdx.y * gridDim.x + blockIdx.x`.
bool is_flattened_global_index(const grammar::ParsedKernel& k, std::size_t first, std::size_t last);

struct GlobalIndexLine {
  std::size_t name = 0;                  // the token of NAME
  std::size_t equals = 0;                // the token '='
  std::size_t first = 0, last = 0;       // the index expression's tokens
  bool declares = false;                 // `const int NAME = ...;` rather than `NAME = ...;`
  bool flattened = false;                // blocks numbered across a 2-D grid (is_flattened_global_index)
};

// `NAME = <global index>;`, or with `declarations` also `[const] TYPE NAME =
// <global index>;` (one declarator), else nullopt.
std::optional<GlobalIndexLine> global_index_line(const grammar::ParsedKernel& k, const grammar::Element& e,
                                                 bool declarations);

}  // namespace gi::analysis
