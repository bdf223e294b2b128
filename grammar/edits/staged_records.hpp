#pragma once
// The buffers `stage:p` moves through shared memory: a kernel that gives
// each thread a record of K consecutive elements,
//     tid = blockIdx.x * blockDim.x + threadIdx.x;
//     if (tid < N) { ...  out[K * tid + c] = v;  ... in[K * tid + c] ... }
// stores or loads a warp's values K elements apart, so every instruction
// touches K times the memory segments it needs (jacobian matrices, 9 floats
// a voxel; second derivatives, 6 float4 a node; interleaved x, y, z). Held
// in shared memory, a block's records cross global memory in consecutive
// elements: a store's after the guard by the whole block, a load's before
// it (the coalescing of CUDA's best-practice guide: a block's records
// transposed through shared memory).
//
// A store site is a pointer parameter p of the work-item region's kernel
// (grammar/edits/work_item_region.hpp) that the kernel writes and that
//  - appears only as the left side of whole statements `p[INDEX] = VALUE;`
//    inside the guard (never read, its address never taken, no compound
//    assignment);
//  - each store standing straight in the guard's body, or straight in the
//    body of a `for (int i = A; i < B; i++)` loop (literal bounds; no
//    break, continue or goto) that stands straight there, so each thread
//    past the guard makes all of them;
//  - together writing every c in [0, K) and nothing outside it: every
//    element the block copies out was written, and no thread's record
//    reaches another's.
// A load site is a pointer parameter the kernel only reads, each read
// inside the guard and `p[INDEX]` (its address not taken), where the reads
// every thread past the guard surely makes (placed as a store's must be,
// and under no `?:`, `&&` or `||` of their statement) read every c in
// [0, K): the block's copy-in reads only elements the seed reads too.
// Each INDEX is K * tid + c (any order of terms; K a whole literal >= 2, the
// same for every access of the buffer) with c a whole literal or the loop's
// counter plus a literal, and within [0, K). A buffer accessed only as
// `p[tid]` is consecutive already: neither a site nor a refusal; nor is a
// read-only buffer read other ways, unless some of its reads are records.
// The element type's size must be known, and K elements at most 224 bytes
// (a block of 1024 threads then fits the SM's shared memory).
// The kernel must let every thread reach the barriers around the guard: the
// guard is exactly `if (tid < N)` (another condition would leave records
// below N untouched), N not assigned inside, it stands in the kernel's
// outermost block, and no return or goto comes before its end. The
// work-item region already rules out shared memory and barriers of the
// kernel's own.
#include <cstddef>
#include <string>
#include <vector>

#include "grammar/edit_context.hpp"
#include "grammar/edits/work_item_region.hpp"
#include "grammar/grammar.hpp"

namespace gi::grammar {

struct StagedRecord {
  std::string buffer;                // the parameter's name
  std::string element;               // its element type as declared (float, float4, ...)
  int components = 0;                // K: elements of a thread's record
  unsigned element_bytes = 0;        // sizeof the element type
  bool load = false;                 // read records (copied in before the guard), else written ones (copied out after)
  std::vector<std::size_t> rules;    // the rules of its accesses
};

struct StagedRecords {
  WorkItemRegion region;
  std::size_t guard_rule = 0;             // the guard's rule: the copy-in goes before it
  std::size_t after_rule = 0;             // the rule right after the guard: the copy-out goes before it
  std::vector<StagedRecord> sites;        // in parameter order
  // Why buffers with records have no site (what `gi families` lists); a
  // kernel none of whose buffers has records has none to say.
  std::vector<std::string> refusals;
  std::string kernel_problem;             // what the kernel itself rules out, if anything (also without records)
};

StagedRecords find_staged_records(const Grammar& g, const EditContext& context);

// The bytes of one element of a type a staged buffer may have; 0 for others.
unsigned staged_element_bytes(const std::string& type);

}  // namespace gi::grammar
