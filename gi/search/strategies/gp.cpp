// GECCO 2014 GP (the default strategy): initial population of single random
// edits; truncation selection of the top half; each parent gets two
// children, one by two-point crossover with another parent, one by appending
// a random edit. A seed with switches (and the define family on) starts with
// each of its allowed switch settings in the population too (at most half of
// it), so the search builds on the hand-written paths from the first
// generation, as BarraCUDA's GI chose among and combined its alternative
// implementations. Every legal edit of a transformation family (few, large
// and independent: one per site and setting) joins them there, within the
// same half, and so does each setting applied at every site at once; where
// the half is too small, the families take turns.
#include <algorithm>
#include <map>

#include "gi/search/search_strategy.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/patch_apply.hpp"
#include "gi/seed/switch_settings.hpp"

namespace gi {
namespace {
using grammar::Patch;

std::vector<Individual> ranked(std::vector<Individual> pop) {
  std::stable_sort(pop.begin(), pop.end(), [](const Individual& x, const Individual& y) { return fitter(x.eval, y.eval); });
  return pop;
}

class GeneticProgramming : public ConfiguredSearch {
 public:
  using ConfiguredSearch::ConfiguredSearch;

  // Whether the patch's edits are legal together.
  bool together(const Patch& patch) const {
    try {
      grammar::validate_patch(ops_.grammar(), patch, ops_.context());
      return true;
    } catch (const grammar::PatchError&) {
      return false;
    }
  }

  std::vector<Patch> propose(const SearchState& state, std::mt19937_64& rng) override {
    std::vector<Patch> out;
    if (state.population.empty()) {
      const auto& families = ops_.available();
      const std::size_t half = static_cast<std::size_t>(config_.population / 2);
      if (std::find(families.begin(), families.end(), "define") != families.end())
        for (const SwitchSetting& s : switch_settings(ops_.grammar(), ops_.context(), ops_.grammar().file_name()))
          if (!s.patch.edits.empty() && out.size() < half) out.push_back(s.patch);
      // Each transformation family's patches: its edits, then each setting at every site at once.
      std::vector<std::vector<Patch>> offered;
      for (const std::string& name : families) {
        const grammar::EditFamily& family = grammar::edit_family(name);
        if (family.group() != grammar::EditGroup::Transform) continue;
        const std::vector<grammar::Edit> edits = family.candidates(ops_.grammar(), ops_.context());
        std::vector<Patch> patches;
        for (const grammar::Edit& e : edits) patches.push_back(Patch{{e}});
        // Each setting at every site at once (two sums, two atomics): what
        // would otherwise take crossover to find; not where the family
        // refuses its sites together (warp_per_item loops one inside another).
        std::map<std::pair<std::string, int>, Patch> everywhere;
        for (const grammar::Edit& e : edits) everywhere[{e.literal, e.value}].edits.push_back(e);
        for (const auto& [setting, patch] : everywhere)
          if (patch.edits.size() > 1 && together(patch)) patches.push_back(patch);
        if (!patches.empty()) offered.push_back(std::move(patches));
      }
      // Taken in turn, one of each family's at a time, so that where the half
      // is too small no family takes it all (the order of their names would).
      for (std::size_t k = 0; out.size() < half; ++k) {
        bool any = false;
        for (const auto& patches : offered)
          if (k < patches.size() && out.size() < half) {
            out.push_back(patches[k]);
            any = true;
          }
        if (!any) break;
      }
      while (out.size() < static_cast<std::size_t>(config_.population)) {
        Patch p;
        ops_.append_random_edit(p, rng);
        out.push_back(std::move(p));
      }
      return out;
    }
    const auto pop = ranked(state.population);
    const std::size_t parents = std::max<std::size_t>(1, pop.size() / 2);
    std::uniform_int_distribution<std::size_t> any_parent(0, parents - 1);
    for (std::size_t i = 0; out.size() < static_cast<std::size_t>(config_.population); i = (i + 1) % parents) {
      const Patch& p = pop[i].patch;
      Patch child = crossover(p, pop[any_parent(rng)].patch, rng);
      if (child.edits.empty()) ops_.append_random_edit(child, rng);
      out.push_back(std::move(child));
      if (out.size() == static_cast<std::size_t>(config_.population)) break;
      Patch mutant = p;
      ops_.append_random_edit(mutant, rng);
      out.push_back(std::move(mutant));
    }
    return out;
  }
};

}  // namespace
}  // namespace gi

GI_REGISTER_SEARCH_STRATEGY("gp", gi::GeneticProgramming,
                            "genetic programming (GECCO 2014): truncation selection, crossover, mutation")
