// choose_block_sizes (gi/seed/block_size_choice.hpp).
#include "gi/seed/block_size_choice.hpp"

#include <algorithm>

namespace gi {

BlockSizeChoice choose_block_sizes(const std::vector<analysis::StaticShared>& arrays, const std::vector<int>& candidates,
                                   int preferred) {
  BlockSizeChoice out;
  out.sizes = candidates;
  for (const analysis::StaticShared& a : arrays) {
    const std::string what = "__shared__ " + a.name + "[" + std::to_string(a.extent) + "] (line " +
                             std::to_string(a.line) + ")";
    if (a.use.unused) continue;
    // Its largest index must not depend on anything but the block size.
    const bool over_block = a.use.count && [&] {
      for (const std::string& n : a.use.count->names())
        if (n != "B") return false;
      return true;
    }();
    if (!over_block) {
      out.notes.push_back("gi could not bound the indices of " + what + (a.use.refusal.empty() ? "" : ": " + a.use.refusal) +
                          "; check that every block size in tunables.block_sizes stays within it");
      continue;
    }
    std::vector<int> kept;
    for (int b : out.sizes)
      if (const auto need = a.use.count->evaluate({{"B", static_cast<double>(b)}}); need && *need <= a.extent)
        kept.push_back(b);
    if (kept.size() < out.sizes.size())
      out.inferred.push_back("tunables: block sizes up to " + (kept.empty() ? std::string("none") : std::to_string(kept.back())) +
                             " (" + what + " needs " + a.use.count->text() + " elements with blocks of B threads: " +
                             a.use.count_evidence + ")");
    if (kept.empty())
      out.refusal = "no block size of " + std::to_string(candidates.front()) + " or more keeps " + what +
                    " within its length (" + a.use.count_evidence + ")";
    out.sizes = std::move(kept);
  }
  if (!out.sizes.empty())
    out.default_size = std::find(out.sizes.begin(), out.sizes.end(), preferred) != out.sizes.end() ? preferred
                                                                                                    : out.sizes.back();
  return out;
}

}  // namespace gi
