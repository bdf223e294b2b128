#pragma once
// Atomics that scatter into a buffer by an index taken from data (a
// histogram's bin, a joint histogram's cell): the sites of the `privatise`
// edit family (grammar/edits/privatise.cpp). Each block can update a copy of
// the buffer in its own shared memory instead and add the copy to the buffer
// once, with one atomic per touched element per block: the hot bins then
// contend within a block, not across the whole GPU.
//
// A site is a statement `atomicOP(&p[i], VALUE);` (or p + i, i + p) of an
// operation that commutes with itself (as for aggregate,
// analysis/aggregate_sites.hpp: add, min, max, and, or, xor, or a float
// max/min compare-and-swap helper) in a kernel where
//  - the address differs between threads (one that does not is aggregate's:
//    a register beats shared memory);
//  - p is a pointer parameter the kernel never assigns, touched elsewhere
//    only by statements of the same operation on the same element type
//    (every one of them is privatised with it; they commute);
//  - every thread reaches the end of the kernel (no return, or one early
//    exit `if (COND) return;` in the outermost block, which becomes a
//    predicate), where the block's barrier and merge go;
//  - the kernel has no dynamic shared memory of its own (the copy takes it);
//  - the statement is the only one on its line, and the kernel uses no
//    names starting gi_.
// Nothing needs the index to be in range or the buffer's extent known here:
// the copy covers as many elements as the launch gives it bytes for, and an
// index outside it updates the buffer in global memory, as the seed did.
#include <functional>

#include "analysis/aggregate_sites.hpp"

namespace gi::analysis {

// `live`: whether a token is compiled (empty: every token). Sites carry
// buffer and index; refusals say why each other atomic is none.
AggregateSites find_privatise_sites(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live = {});

}  // namespace gi::analysis
