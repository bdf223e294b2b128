#pragma once
// The buffers `coarsen:K,vector` loads as vectors: a pointer parameter of the
// work-item region's kernel to float, int or unsigned, or to an 8- or 16-bit
// integer (an image of unsigned char, of short), that the kernel only reads,
// and only as `p[tid]` (tid the region's index) inside the region. Each
// thread's K consecutive items of such a buffer are then K / W loads of
// W-wide vectors (float4, int2, uchar4, short2, ...) made once before the
// thread's loop.
#include <functional>
#include <string>
#include <vector>

#include "grammar/edits/work_item_region.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {

struct VectorLoad {
  std::string pointer;  // the parameter's name
  std::string element;  // its element type as the kernel writes it: float, unsigned char, ...
  std::string vector4;  // its 4-wide vector type: float4, int4, uint4, uchar4, char4, short4, ushort4 (2-wide: the same with 2)
  int bytes = 4;        // of one element: a load of W elements is aligned to W * bytes
};

// `live`: whether a token is compiled at the seed's default switch setting
// (grammar/edits/atomic_site_edit.hpp, live_tokens); a dead path's reads do not count.
std::vector<VectorLoad> vector_loads(const Grammar& g, const WorkItemRegion& site,
                                     const std::function<bool(std::size_t)>& live);

// Whether every name of the region's bound is a parameter of its kernel (a
// load before the thread's loop must be able to read it).
bool bound_is_parameters(const Grammar& g, const WorkItemRegion& site);

// The key of a rule's rewrite of `p[tid]` to its vector copy.
inline const std::string kVectorReadKey = "coarsen vector ";

// Drops every vector copy's reads in the region: the loop that replaces
// `coarsen:K,vector` (another coarsen, privatise's grid-stride loop) makes
// no copies.
void drop_vector_reads(const WorkItemRegion& site, PatchState& s);

}  // namespace gi::grammar
