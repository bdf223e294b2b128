#pragma once
// Loops a group of threads can share: the sites of the `warp_per_item`
// family (grammar/edits/warp_per_item.cpp). A kernel that gives each thread
// one item (a row, a node, a block of voxels) and a long loop over that
// item's data leaves most of the GPU's memory bandwidth unused when
// neighbouring threads read addresses far apart. When the loop only adds
// into accumulators, G lanes of a warp can share it: lane l takes iterations
// l, l + G, ..., the lanes' partial sums are combined with shuffles, and one
// lane writes the item's result.
//
// A site is a `for (V = A; V < E; V++)` loop (also `<=`, `++V`, `V += 1`,
// V declared in the header or not), or a `while (V < E) { ...; V++; }` loop
// whose V++ stands alone on the body's last line and whose body has no
// continue, with a braced body, in a __global__ kernel that
//  - has one global index line `NAME = blockIdx.x * blockDim.x + threadIdx.x;`
//    (analysis/global_index.hpp; `const int NAME = ...` too) in its
//    outermost block, NAME never assigned again, and uses threadIdx,
//    blockIdx.x, blockDim.x, gridDim.x, warpSize, shared memory, barriers
//    and warp collectives nowhere else: then every value the kernel computes
//    is the same in the G lanes that share an item;
//  - calls only pure math functions (analysis/uniformity.hpp) and functions
//    of the file that assign nothing but their own locals and parameters
//    and write only through their pointer parameters (a call that passes a
//    local array to such a parameter assigns the array);
//  - writes no memory (a store through a pointer, an atomic, a call that
//    gets a pointer to write through) before the loop or inside a loop
//    around it: what the lanes load is then what the seed's thread loaded;
//  - writes memory after the loop only in statements of their own line,
//    which one lane of the group makes;
// and whose body
//  - writes no memory and has no return, goto, or break out of the loop
//    (continue is fine), and does not assign V or a name of E;
//  - assigns variables declared outside it only as
//      sums: every use in the body is `x += e`, `x -= e`, `x = x + e`,
//        `x++` or `x--` (e without x), x of a type a shuffle takes (int,
//        unsigned, long long, unsigned long long, float, double), or as
//      extrema: every use in the body is `x = f(x, e)` or `x = f(e, x)`
//        with f one maximum or minimum (fmaxf, max, a file function
//        `return a > b ? a : b;`, ...: analysis/extremum_functions.hpp),
//        x of a type a shuffle takes, or as
//      temporaries: each read in the body follows, in the same iteration,
//        a whole assignment `x = e` (or a call that fills a local array),
//        and the value the loop leaves is never read (every read after the
//        loop, or before it inside a loop around it, follows a whole
//        assignment made after the loop or in that same pass), or as
//      flags: the body only sets x to one literal (`inside = 0;`) and
//        never reads it; any lane that set it sets it for the group, or as
//      records of a maximum or minimum (analysis/extremum_record.hpp):
//        `if (SCORE > best.w) { best.x = ...; best.w = SCORE; }` (>=, <,
//        <= too), the record's variables assigned nowhere else in the body
//        and read there only in the comparison, the loop counter an int;
//    A compensated (Kahan) sum, `y = x - c; t = s + y; c = (t - s) - y;
//    s = t;` in a row, makes s and c sums and y, t temporaries: each lane
//    compensates its own partial sum.
//  - has at least one sum, flag or record.
// A loop heading a perfect nest (nothing between the headers and braces,
// int counters declared in the headers, bounds free of the nest's counters)
// is collapsed into one loop over the nest's iterations (`nest`).
// Anything else is refused with the line and the name (refusals).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "analysis/loop_nest.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct LoopSum {
  std::string name, type;  // the accumulator and its declared type
};

// A variable the body only sets to one constant, read after the loop: if
// any lane set it, every lane takes the constant.
struct LoopFlag {
  std::string name, type, value;
};

// A maximum or minimum kept with what goes with it (analysis/extremum_record.hpp).
struct LoopRecord {
  std::string op;     // SCORE op compared: >, >=, <, <=
  std::string key;    // the compared variable's name: the lane's iteration is gi_at_<key>
  std::string score;  // the compared access ("best.w") and its type
  std::string score_type;
  std::vector<std::pair<std::string, std::string>> others;  // the other accesses assigned with it, and their types
  std::size_t score_statement = 0;  // where the record takes the iteration
};

// A maximum or minimum kept by `x = f(x, e)` (analysis/extremum_functions.hpp):
// each lane keeps its own, and the lanes' values meet through f.
struct LoopExtremum {
  std::string name, type, function;
};

struct WarpPerItemSite {
  int function = -1;
  std::size_t loop = 0;        // the for header's element
  std::size_t body_close = 0;  // the element of the body's closing brace
  std::string variable;        // V
  // Tokens of the start value A and of the step, and of `for` .. `)`.
  std::size_t start_first = 0, start_last = 0, step_first = 0, step_last = 0, header_first = 0, header_last = 0;
  std::vector<LoopSum> sums;
  std::vector<LoopFlag> flags;
  std::vector<LoopRecord> records;
  std::vector<LoopExtremum> extrema;
  // A `while (V < E) { ... V++; }` loop: its V++ statement, which the
  // rewrite drops (the for header it becomes steps V); 0 for a for loop.
  std::size_t increment = 0;
  // A perfect nest of two or more loops (int counters declared in their
  // headers, bounds free of the nest's counters) is collapsed: empty otherwise.
  std::vector<NestLevel> nest;
  long long literal_trips = -1;  // the trip count (of the whole nest) when its bounds are literals, else -1
  std::size_t index_line = 0;  // the global index line's element
  std::size_t index_first = 0, index_last = 0;  // its index expression's tokens
  bool index_flattened = false;  // the index numbers blocks across a 2-D grid (analysis/global_index.hpp)
  std::vector<std::size_t> stores;  // statements after the loop that write memory: one lane makes them
};

struct WarpPerItemSites {
  std::vector<WarpPerItemSite> sites;
  std::vector<std::string> refusals;  // "line N: why", one per for loop that is no site
};

// `live`: whether a token is compiled (switch paths the seed's default
// setting leaves out are not looked at); empty: every token.
WarpPerItemSites find_warp_per_item_sites(const grammar::ParsedKernel& k,
                                          const std::function<bool(std::size_t)>& live = {});

}  // namespace gi::analysis
