// First-improvement local search from the best variant (a baseline for
// ablation): neighbours add one edit or drop one; the first (in proposal
// order) that beats the current variant beyond the noise margin becomes
// current (the driver moves `best`).
#include "gi/search/search_strategy.hpp"

namespace gi {
namespace {
using grammar::Patch;

class LocalSearch : public ConfiguredSearch {
 public:
  using ConfiguredSearch::ConfiguredSearch;

  std::vector<Patch> propose(const SearchState& state, std::mt19937_64& rng) override {
    const Patch current = state.best ? state.best->patch : Patch{};
    std::vector<Patch> out;
    std::bernoulli_distribution drop(0.2);
    for (int i = 0; i < config_.population; ++i) {
      Patch p = current;
      if (!p.edits.empty() && drop(rng)) {
        p.edits.erase(p.edits.begin() +
                      static_cast<long>(std::uniform_int_distribution<std::size_t>(0, p.edits.size() - 1)(rng)));
      } else {
        ops_.append_random_edit(p, rng);
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  bool first_improvement() const override { return true; }
};

}  // namespace
}  // namespace gi

GI_REGISTER_SEARCH_STRATEGY("local", gi::LocalSearch, "first-improvement local search: add or drop one edit of the best")
