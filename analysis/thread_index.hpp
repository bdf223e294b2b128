#pragma once
// The thread-index expressions `gi init` reads (parsed: analysis/global_index.hpp
// matches the tokens of a whole line instead):
//  - the global index blockIdx.A * blockDim.A + threadIdx.A, its factors or
//    terms in either order: axis A;
//  - blockIdx.y or blockIdx.z alone: a block row (slice) per item, axis y (z);
//  - the global index over blocks flattened from a 2-D grid,
//    (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x, which
//    kernels write to launch more than 65535 blocks on old GPUs: axis x. On
//    a grid of one row (blockIdx.y = 0, as gi init drafts it) it is the
//    plain global index, and any grid covers the same threads.
//  - blockIdx.A * K + threadIdx.A with K a name or a number, not blockDim
//    (Rodinia's `bx * NUMBER_THREADS + tx`): the global index of a kernel
//    written for blocks of K threads, axis A, with `fixed_width` K;
//    the caller decides whether K has one value and fixes the block size.
//  - blockDim.x * gridDim.x: the step of a grid-stride loop (the whole grid's
//    threads), always positive.
#include <optional>

#include "analysis/expression.hpp"

namespace gi::analysis {

// 0, 1, 2 for `object.x`, `.y`, `.z`; -1 for anything else.
int member_axis(const Expr& m, const char* object);

struct GlobalIndexForm {
  int axis = -1;                // -1: not a global index
  bool flattened_rows = false;  // the 2-D grid flattened form (needs a grid of one row)
  std::optional<Expr> fixed_width;  // K of blockIdx.A * K + threadIdx.A; none for blockDim.A
};
GlobalIndexForm global_index_form(const Expr& e);

bool is_grid_stride(const Expr& e);

}  // namespace gi::analysis
