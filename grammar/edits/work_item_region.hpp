#pragma once
// The work-item region of a kernel: the index line and the guard after it,
//     tid = blockIdx.x * blockDim.x + threadIdx.x;   (or `int tid = ...;`)
//     ...
//     if (tid < N) { ... }
// the usual shape of one thread per work item. Edits that change how many
// items a thread handles find it here: thread coarsening (a loop of K items,
// grammar/edits/coarsen.cpp) and the grid-stride loop of privatisation
// (grammar/edits/privatise.cpp). In a seed with switches only the path its
// default setting compiles counts.
#include <cstddef>
#include <string>
#include <variant>

#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"

namespace gi::grammar {

struct WorkItemRegion {
  std::size_t first_rule = 0, last_rule = 0;  // the index line .. the guard's closing brace
  std::string index_text;                     // `blockIdx.x * blockDim.x + threadIdx.x` as written
  std::string tid;                            // the index's name
  // N of `if (tid < N ...)`, as written, when the guard is `tid < N` or
  // begins with `tid < N &&` and no name of N is assigned inside the guard's
  // if statement; empty otherwise (a loop over items cannot then know where
  // the items end).
  std::string bound;
  // The index line's element, the guard's `if` element and the last token of
  // the guard's if statement (else branches included).
  std::size_t index_element = 0, guard_element = 0, end_token = 0;
  // The guard is an early exit, `if (tid >= N) return;`, and the region runs
  // from the index line to the end of the kernel's body; every `return` in
  // it (none in a loop or switch) ends one item. Only for a caller that asked.
  bool early_exit = false;
};

// Whether the token t (a name) is assigned there: followed by `=`, an
// `op=`, `++` or `--`, or preceded by `++`, `--` or `&` (its address taken).
bool assigns(const ParsedKernel& k, std::size_t t);

// The name a loop over a thread's items counts with.
inline constexpr const char* kItemCounter = "gi_item";

// The region, or why the kernel has none (the first reason met): shared
// memory or barriers (a loop around them would change what they mean),
// blockIdx outside the index line, a return or an assignment of tid inside.
// `early_exit_guard`: an early exit `if (tid >= N) return;` may be the guard
// (coarsen turns its returns into the item loop's `continue`).
std::variant<std::string, WorkItemRegion> find_work_item_region(const Grammar& g, const EditContext& context,
                                                                 bool early_exit_guard = false);

}  // namespace gi::grammar
