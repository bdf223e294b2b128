#pragma once
// Small local arrays read at a computed index: the sites of the `registers`
// family (grammar/edits/registers.cpp). A thread's array such as
// `float basis[4];` lives in registers only while every access has an index
// the compiler knows; one read `basis[a]` with `a` computed at run time puts
// the whole array in local memory (ptxas's "stack frame"), so each pass of
// a loop stores and loads it through the L1 cache. Reading it instead as
// `(a == 0 ? basis[0] : (a == 1 ? basis[1] : ...))` leaves only literal
// indices, and the array stays in registers: a few selects in place of
// local-memory traffic.
//
// A site is an array declared in a function's body as `T NAME[N];` (N an
// integer literal 2..16), with at least one read at a computed index, where
//  - NAME is declared once in its function (the rewrite works on the
//    function's text, so a second NAME there would be rewritten too);
//  - no access writes an element at a computed index (`NAME[i] = v`,
//    `NAME[i] += v`, `NAME[i]++`, `&NAME[i]`): such an array stays in local
//    memory whatever its reads become, unless the compiler resolves the
//    index (a loop of literal bounds it unrolls). Refused, naming the line;
//  - N is 2..16 (refused otherwise: a longer chain costs more than it saves).
// An array with __shared__, static, extern, volatile or __constant__ is no
// thread's own: neither a site nor a refusal.
//
// The rewrite is legal read by read, so it is applied to every line the
// patched function has (copies included): a read whose index is not a pure
// expression (an assignment, ++, a call) or that is a member access or an
// element of an element is left as it is, which is always correct. For an
// index outside 0..N-1 the seed's read is undefined behaviour; the chain
// reads the last element.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct RegisterArray {
  int function = -1;            // index into ParsedKernel::functions
  std::size_t declaration = 0;  // the declaration's element
  std::string name;
  int size = 0;
  int computed_reads = 0;  // reads the rewrite turns into a chain, in the seed
};

struct RegisterArrays {
  std::vector<RegisterArray> sites;
  std::vector<std::string> refusals;  // "line N: why", one per array that is no site
};

// `live`: whether a token is compiled (switch paths the seed's default
// setting leaves out are not looked at); empty: every token.
RegisterArrays find_register_arrays(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live = {});

// `text` (one or more lines of code) with every read of NAME at a computed
// index, NAME an array of `size` elements, written as a chain of selects
// with literal indices; other text, comments included, unchanged. `count`,
// if given, receives the number of reads rewritten.
std::string read_through_selects(const std::string& text, const std::string& name, int size, int* count = nullptr);

}  // namespace gi::analysis
