#pragma once
// Mutation operators: draw a random legal edit of a chosen family. Families
// can be switched off for ablation studies; a family with no site in the
// seed is simply unavailable.
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "grammar/edit_rules.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"

namespace gi {

struct OperatorConfig {
  std::set<grammar::EditType> enabled{grammar::all_edit_types().begin(), grammar::all_edit_types().end()};
  // Workload constants for constant specialisation; a parameter without a
  // value here is not specialised.
  std::map<std::string, std::string> constants;
  std::vector<int> unroll_factors{-1, 0, 1, 2, 4, 8};
  std::vector<int> launch_bound_threads{64, 128, 256, 512, 1024};
  std::vector<int> launch_bound_blocks{0, 1, 2, 4, 8};
};

// Parses "delete,replace,ldg" style lists; throws naming an unknown family.
std::set<grammar::EditType> parse_families(const std::string& list);

class EditOperators {
 public:
  EditOperators(const grammar::Grammar& g, OperatorConfig config);

  // Enabled families that have at least one legal edit in this grammar.
  const std::vector<grammar::EditType>& available() const { return available_; }

  std::optional<grammar::Edit> random_edit(grammar::EditType type, std::mt19937_64& rng) const;
  // A uniformly chosen available family, then a uniformly chosen legal edit of it.
  grammar::Edit random_edit(std::mt19937_64& rng) const;

 private:
  using Pair = std::pair<std::size_t, std::size_t>;
  const grammar::Grammar& g_;
  OperatorConfig config_;
  grammar::EditSites sites_;
  std::vector<std::size_t> deletable_;
  std::vector<Pair> replacements_;  // (target, source) of statements, conditions, types, pragmas
  std::vector<Pair> insertions_;    // (anchor, source)
  std::vector<std::string> const_params_;
  std::vector<grammar::EditType> available_;
};

}  // namespace gi
