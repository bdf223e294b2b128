#pragma once
// Mutation operators: draw a random legal edit of an enabled family. Every
// family (grammar/edit_family.hpp) lists its legal edits once; a draw picks a
// family uniformly among the enabled ones that have an edit in this seed,
// then one of its edits uniformly. Families can be switched off for ablation
// studies; a family with no site in the seed is simply unavailable.
#include <random>
#include <set>
#include <string>
#include <vector>

#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"

namespace gi {

struct OperatorConfig {
  // Family names (grammar::parse_family_list); empty: every registered family.
  std::set<std::string> enabled;
  // Switches, constants and the values edits are drawn from.
  grammar::EditContext context;
};

// Parses "delete,replace,cuda" style lists into family names; throws naming
// an unknown entry.
std::set<std::string> parse_families(const std::string& list);

class EditOperators {
 public:
  EditOperators(const grammar::Grammar& g, OperatorConfig config);

  // Enabled families that have at least one legal edit in this grammar, by name.
  const std::vector<std::string>& available() const { return available_; }
  const grammar::EditContext& context() const { return config_.context; }
  const grammar::Grammar& grammar() const { return g_; }

  // A uniformly chosen legal edit of `family`; throws when it has none here.
  grammar::Edit random_edit(const std::string& family, std::mt19937_64& rng) const;
  // A uniformly chosen available family, then a uniformly chosen legal edit of it.
  grammar::Edit random_edit(std::mt19937_64& rng) const;
  // Appends a random edit (as random_edit) to `patch`. A define edit that
  // would leave the patch naming a switch setting its spec does not allow
  // brings the define edits of the nearest allowed setting with it, so a
  // mutation never wastes an evaluation on a rejected setting.
  void append_random_edit(grammar::Patch& patch, std::mt19937_64& rng) const;
  // The other values the family of `edit` offers at the same site (same
  // family and target: coarsen's factor and order, aggregate's level,
  // warp_per_item's group size, a switch's values, ...), in the family's
  // order; empty for the line families (their "value" is which line is
  // copied, not a parameter) and for a family switched off here.
  std::vector<grammar::Edit> alternatives(const grammar::Edit& edit) const;

 private:
  const grammar::Grammar& g_;
  OperatorConfig config_;
  std::vector<std::string> available_;
  std::vector<std::vector<grammar::Edit>> candidates_;  // per available family
};

}  // namespace gi
