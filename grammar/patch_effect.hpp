#pragma once
// What a patch changes beyond the source text: the launch. Switch values may
// appear in the spec's launch expressions (items per thread shrink the grid)
// and thread coarsening divides the grid's x extent (a group of threads per
// item, warp_per_item, multiplies it). A variant is one value:
// patch, switch settings, tuning, launch geometry and architecture; this is
// the part of it the patch decides.
#include <map>
#include <string>

namespace gi::grammar {

struct LaunchEffect {
  std::map<std::string, std::string> switches;  // every switch of the seed: its value in the variant
  int coarsen = 1;                              // work items per thread: grid.x is divided by this (rounded up)
  int group = 1;                                // threads per work item (warp_per_item): grid.x is multiplied by this
  bool operator==(const LaunchEffect&) const = default;
};

// "BSPLINE_PATH=1,ITEMS=2;coarsen=4" (";group=32" for a group per item): stable text for cache keys and logs.
std::string to_string(const LaunchEffect& effect);

}  // namespace gi::grammar
