#pragma once
// The block sizes a spec drafted by gi init tunes: the usual list, or the
// one size the kernel is written for, less any size at which a static
// `__shared__ T s[E]` of the kernel would be indexed past E (a block
// reduction into `s[threadIdx.x]` with E = 256 runs correctly only with
// blocks of at most 256 threads).
#include <string>
#include <vector>

#include "analysis/parameter_use.hpp"

namespace gi {

struct BlockSizeChoice {
  std::vector<int> sizes;          // empty: none fits (the spec's field is FILL, with `refusal`)
  int default_size = 0;
  std::vector<std::string> inferred;  // each cap, with its evidence
  std::vector<std::string> notes;     // arrays whose indices gi could not bound
  std::string refusal;
};

// `candidates`: the sizes to keep or drop, largest last; `preferred`: the
// default where it is kept (else the largest kept).
BlockSizeChoice choose_block_sizes(const std::vector<analysis::StaticShared>& arrays, const std::vector<int>& candidates,
                                   int preferred);

}  // namespace gi
