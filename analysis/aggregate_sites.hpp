#pragma once
// Atomics a block can combine before they reach memory: the sites of the
// `aggregate` edit family (grammar/edits/aggregate.cpp). A kernel that adds
// every element into one total with its own atomicAdd serialises millions of
// atomics on one address; when the address is the same for every thread of
// a block, each thread can add into a register instead, the warp (or the
// block) can sum those registers, and one atomic per warp (or block) gives
// memory the same total. The compiler does not do this itself (ptxas merges
// warp-uniform atomics only for 32-bit integer add/min/max at addresses it
// can prove uniform).
//
// A site is a statement `atomicOP(ADDRESS, VALUE);` of an operation that
// commutes with itself (add, min, max, and, or, xor; or a call of a
// compare-and-swap helper that makes a float max or min, analysis/cas_helpers.hpp)
// in a kernel where
//  - ADDRESS is uniform (analysis/uniformity.hpp) and made of parameters the
//    body never assigns, blockIdx/blockDim/gridDim and constants only, so it
//    can be evaluated again where the kernel ends;
//  - ADDRESS points into a pointer parameter (p, &p[i], p + i, or one of
//    these cast to another element type: (int*)p) of a type the operation
//    takes (add: float, double, int, unsigned int, unsigned long long; the
//    others: int, unsigned int, unsigned long long), which the kernel touches
//    elsewhere only through statements that commute with this one: the same
//    operation on the same element type, an atomic on another constant word
//    of the buffer (&p[0] and &p[1]), or the other half of a float minimum
//    or maximum on the float's bits split on its sign (in the branch of
//    `if (__float_as_int(v) >= 0)` where v's sign bit is clear,
//    atomicMin((int*)A, __float_as_int(v)); where it is set,
//    atomicMax((unsigned int*)A, __float_as_uint(v)): int min and unsigned
//    max make the minimum, int max and unsigned min the maximum; each half
//    only ever meets values of its sign, and the two commute on any word),
//    so the order the warps' results arrive in is one the seed's atomics
//    could have had too;
//  - every thread reaches the end of the kernel: there is no return, or one
//    early exit `if (COND) return;` in the kernel's outermost block, which
//    becomes a predicate around the rest of the body (COND without side
//    effects); returns after which only blocks that are no loop or switch
//    close before the kernel's end are no exits (they are dropped);
//  - the statement is the only one on its line.
// What is refused, and why, is reported per atomic (refusals).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

// `if (COND) return;` (or with braces) in the kernel's outermost block.
struct EarlyExit {
  std::size_t first_element = 0, last_element = 0;  // the if header .. its last element
  std::string condition;                            // COND, to be negated
};

// An atomic operation that commutes with itself, as aggregate combines it.
struct AtomicOperation {
  std::string function;  // "atomicAdd", "atomicMin", ...
  std::string kind;      // "add", "min", "max", "and", "or", "xor"
};

// The operation of atomic function `name`, or nullopt (atomicExch, atomicCAS, ...).
std::optional<AtomicOperation> combinable_atomic(const std::string& name);
// The value that changes nothing under the operation, as a CUDA literal of `type`.
std::string identity_literal(const std::string& kind, const std::string& type);

struct AggregateSite {
  std::size_t element = 0;  // the atomic's statement
  int function = -1;
  AtomicOperation operation;
  std::string address, value, type;  // as written (address, value) and the element type
  std::string buffer;                // the pointer parameter the address points into
  std::string index;                 // i of &p[i], p + i or i + p; "" for other forms
  std::size_t body_first_element = 0;  // the first element of the kernel body
  std::size_t body_close_element = 0;  // the body's closing brace
  std::optional<EarlyExit> exit;
  // `return;` statements that only end the kernel where it would end anyway
  // (no loop or switch left on the way): the rewrite drops them, so every
  // thread reaches the code put before the body's closing brace.
  std::vector<std::size_t> trailing_returns;
};

struct AggregateSites {
  std::vector<AggregateSite> sites;
  std::vector<std::string> refusals;  // "line N: atomicMax(...): why", one per atomic that is no site
};

// `live`: whether a token is compiled (switch paths the seed's default
// setting leaves out are not looked at); empty: every token.
AggregateSites find_aggregate_sites(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live = {});

}  // namespace gi::analysis
