// Random search (a baseline for ablation): every generation afresh, each
// patch 1..max_random_edits random edits.
#include "gi/search/search_strategy.hpp"

namespace gi {
namespace {
using grammar::Patch;

class RandomSearch : public ConfiguredSearch {
 public:
  using ConfiguredSearch::ConfiguredSearch;

  std::vector<Patch> propose(const SearchState&, std::mt19937_64& rng) override {
    std::vector<Patch> out;
    std::uniform_int_distribution<int> length(1, std::max(1, config_.max_random_edits));
    for (int i = 0; i < config_.population; ++i) {
      Patch p;
      for (int k = length(rng); k > 0; --k) ops_.append_random_edit(p, rng);
      out.push_back(std::move(p));
    }
    return out;
  }
};

}  // namespace
}  // namespace gi

GI_REGISTER_SEARCH_STRATEGY("random", gi::RandomSearch, "random search: 1 to max_random_edits (5) random edits per patch, each generation afresh")
