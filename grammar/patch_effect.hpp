#pragma once
// What a patch changes beyond the source text: the launch. Switch values may
// appear in the spec's launch expressions (items per thread shrink the grid)
// and thread coarsening divides the grid's x extent (a group of threads per
// item, warp_per_item, multiplies it). A variant is one value:
// patch, switch settings, tuning, launch geometry and architecture; this is
// the part of it the patch decides.
#include <cstddef>
#include <map>
#include <string>

namespace gi::grammar {

struct LaunchEffect {
  std::map<std::string, std::string> switches;  // every switch of the seed: its value in the variant
  int coarsen = 1;                              // work items per thread: grid.x is divided by this (rounded up)
  // A grid-stride loop over the items (privatisation): grid.x holds at most
  // this many threads, rounded up to whole blocks; 0: no cap.
  unsigned grid_threads = 0;
  // A per-block copy of this buffer parameter in dynamic shared memory
  // (privatisation): the launch gives it the buffer's element count times
  // private_element_bytes when that fits kPrivateSharedLimit, else nothing
  // (the kernel then reads a size of 0 and updates the buffer in global
  // memory). Replaces the spec's shared_bytes. "": none.
  std::string private_buffer;
  unsigned private_element_bytes = 0;
  int group = 1;  // threads per work item (warp_per_item): grid.x is multiplied by this
  // Two thread axes traded (remap): "xy", "xz" or "yz"; "" for none. The
  // grid's extent along each becomes the blocks the other axis's threads
  // need, applied after the changes above.
  std::string swap_axes;
  // Buffers whose records go through shared memory (stage), each with its
  // bytes per thread: the launch adds them, times the block's threads and
  // each rounded up to 16 bytes, to the dynamic shared memory.
  std::map<std::string, unsigned> staged;
  bool operator==(const LaunchEffect&) const = default;
};

// The most dynamic shared memory a private copy gets: what every block may
// use without opting in, so that several blocks still fit on one SM.
inline constexpr std::size_t kPrivateSharedLimit = 48 * 1024;

// "BSPLINE_PATH=1,ITEMS=2;coarsen=4" (";group=32" for a group per item): stable text for cache keys and logs.
std::string to_string(const LaunchEffect& effect);

}  // namespace gi::grammar
