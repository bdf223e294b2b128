#pragma once
// Which edits are legal on a grammar: the scope rules the families share (a
// copy only where every identifier it uses refers to the same declaration as
// where it came from, break/continue only inside a loop, same rule type for
// replacements) and the check of one edit, which asks the edit's family
// (grammar/edit_family.hpp). A copied line must also read only locals given
// a value before it (grammar/local_assignments.hpp).
#include <optional>
#include <string>
#include <vector>

#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"

namespace gi::grammar {

// Why `edit` is not allowed on `g`, or nullopt when it is legal and scope-safe.
std::optional<std::string> edit_problem(const Grammar& g, const EditContext& context, const Edit& edit);
// The same without a context (no switches, no constants).
std::optional<std::string> edit_problem(const Grammar& g, const Edit& edit);

// Scope checks behind the line families, shared with tests and fuzzers.
bool can_replace_statement(const Grammar& g, std::size_t target, std::size_t source);
bool can_replace_condition(const Grammar& g, std::size_t target, std::size_t source);
bool can_insert_after(const Grammar& g, std::size_t anchor, std::size_t source);

// Rules a line-level CUDA edit (__ldg, fast math) may target.
bool line_edit_target(RuleKind kind);
// The kernel (__global__) parameter of that name, or nullptr.
const Param* kernel_param(const Grammar& g, const std::string& name);

}  // namespace gi::grammar
