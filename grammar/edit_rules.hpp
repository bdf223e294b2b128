#pragma once
// Which edits are legal on a grammar: same rule type for replacements, a copy
// only where every identifier it uses refers to the same declaration as where
// it came from, break/continue only inside a loop, CUDA edits only where they
// have a site. Mutation operators draw from EditSites; patches read from text
// are checked with edit_problem before they are applied.
#include <optional>
#include <string>
#include <vector>

#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"

namespace gi::grammar {

struct KernelParam {
  std::string name;
  std::string type;
};

struct EditSites {
  std::vector<std::size_t> statements;  // delete/replace targets and copy sources
  std::vector<std::size_t> pragmas;     // delete/replace
  std::vector<std::size_t> conditions;  // If rules (IF sub-rule replace)
  std::vector<std::size_t> types;       // Declaration rules with a type sub-rule
  std::vector<std::size_t> anchors;     // rules a copy may be inserted after
  std::vector<std::size_t> for_loops;   // unroll targets
  std::vector<std::size_t> ldg_rules;
  std::vector<std::size_t> fastmath_rules;
  std::vector<std::string> restrict_params;
  std::vector<KernelParam> const_params;
};

EditSites find_edit_sites(const Grammar& g);

// Why `edit` is not allowed on `g`, or nullopt when it is legal and scope-safe.
std::optional<std::string> edit_problem(const Grammar& g, const Edit& edit);

// Scope checks behind edit_problem, exposed for the mutation operators.
bool can_replace_statement(const Grammar& g, std::size_t target, std::size_t source);
bool can_replace_condition(const Grammar& g, std::size_t target, std::size_t source);
bool can_insert_after(const Grammar& g, std::size_t anchor, std::size_t source);

}  // namespace gi::grammar
