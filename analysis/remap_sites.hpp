#pragma once
// Which thread axes of a kernel may trade places: the sites of the `remap`
// family (grammar/edits/remap.cpp). A 2-D kernel written as one writes
// a[i][j], with i (the row) from the x thread index, lets the fastest thread
// index walk the rows: a warp's loads are a row apart and each touches its
// own cache line. Swapping the axes (x for y in every threadIdx, blockIdx,
// blockDim and gridDim of the kernel, and the launch grid's extents with
// them) lets neighbouring lanes take neighbouring columns.
//
// The swap gives every thread the item of another thread, and the grid's
// extents are rounded up to whole blocks along the other axis. So the
// entry kernel (the spec's `entry`, or a file's only kernel) qualifies for a
// pair of axes when
//  - each axis of the pair has a global index blockIdx.A * blockDim.A +
//    threadIdx.A bounded by a guard over the kernel's parameters
//    (analysis/parameter_use.hpp's work item): threads past the items do
//    nothing, however far the grid rounds up;
//  - it uses no warp-level code (shuffles, votes, __match_any_sync,
//    __syncwarp, warpSize, __activemask, inline asm, volatile), whose lanes
//    the swap regroups, and no shared memory or barrier, whose tiles may
//    assume the block's shape;
//  - the functions it calls read no thread, block or grid index (the swap
//    renames the kernel's own text only).
// A kernel that reads threadIdx.x and threadIdx.y but does not qualify is
// refused with the reason; a 1-D kernel has no site and no refusal.
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct RemapSites {
  int kernel = -1;                  // index into ParsedKernel::functions; -1: no entry kernel
  std::vector<std::string> pairs;   // legal axis pairs: "xy", "xz", "yz"
  std::vector<std::string> refusals;  // "line 12: ...": why a 2-D kernel, or the file, has no site
};

RemapSites find_remap_sites(const grammar::ParsedKernel& k, const std::string& entry);

// `text` with the axes of `pair` ("xy") swapped in every threadIdx, blockIdx,
// blockDim and gridDim member (`threadIdx.x` <-> `threadIdx.y`); other text,
// comments included, unchanged.
std::string swap_thread_axes(const std::string& text, const std::string& pair);

}  // namespace gi::analysis
