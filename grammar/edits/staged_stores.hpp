#pragma once
// The buffers `stage:p` writes through shared memory: a kernel that gives
// each thread a record of K consecutive elements,
//     tid = blockIdx.x * blockDim.x + threadIdx.x;
//     if (tid < N) { ...  out[K * tid + c] = v;  ... }
// stores a warp's values K elements apart, so every store instruction
// touches K times the memory segments it fills (jacobian matrices, 9 floats
// a voxel; second derivatives, 6 float4 a node). Written to shared memory
// first and then copied out by the whole block in consecutive elements, the
// same bytes reach global memory in full segments (the coalescing of CUDA's
// best-practice guide: a block's records transposed through shared memory).
//
// A site is a pointer parameter p of the work-item region's kernel
// (grammar/edits/work_item_region.hpp) that
//  - appears only as the left side of whole statements `p[INDEX] = VALUE;`
//    inside the guard (never read, its address never taken, no compound
//    assignment), each INDEX being K * tid + c (any order of terms; K a
//    whole literal >= 2, the same for every store) with c a whole literal
//    or a loop counter `i (+ literal)` of a `for (int i = A; i < B; i++)`
//    with literal bounds;
//  - every such store stands directly in the guard's body, or directly in
//    the body of such a loop that stands directly in the guard's body (no
//    break, continue or goto there), so each thread that passes the guard
//    makes all of them;
//  - together they write every c in [0, K) and nothing outside it: every
//    element the block copies out was written, and no thread's record
//    reaches another's;
//  - is of an element type whose size gi knows, with K elements at most 224
//    bytes (a block of 1024 threads then fits the SM's shared memory).
// And the kernel must let every thread reach the barrier after the guard:
// the guard stands in the kernel's outermost block, the region has a bound
// N (`if (tid < N)`, N not assigned inside), and no return or goto comes
// before the guard's end. The work-item region already rules out shared
// memory and barriers of the kernel's own.
#include <cstddef>
#include <string>
#include <vector>

#include "grammar/edit_context.hpp"
#include "grammar/edits/work_item_region.hpp"
#include "grammar/grammar.hpp"

namespace gi::grammar {

struct StagedStore {
  std::string buffer;                // the parameter's name
  std::string element;               // its element type as declared (float, float4, ...)
  int components = 0;                // K: elements of a thread's record
  unsigned element_bytes = 0;        // sizeof the element type
  std::vector<std::size_t> rules;    // the rules of its stores
};

struct StagedStores {
  WorkItemRegion region;
  std::size_t after_rule = 0;             // the rule right after the guard: the copy-out goes before it
  std::vector<StagedStore> sites;         // in parameter order
  std::vector<std::string> refusals;      // why other written buffers (or the kernel) have none
};

StagedStores find_staged_stores(const Grammar& g, const EditContext& context);

// The bytes of one element of a type a staged buffer may have; 0 for others.
unsigned staged_element_bytes(const std::string& type);

}  // namespace gi::grammar
