#pragma once
// Token-level rewrites behind the CUDA-aware edit families. Each works on the
// text of one line rule (or the function header) and leaves everything it
// does not recognise untouched, so an edit on a line without a site is a no-op.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "grammar/grammar.hpp"

namespace gi::grammar {

// Pointer parameters of `function` whose loads may go through __ldg: never
// written through, never escaping, of a type __ldg supports.
std::set<std::string> ldg_parameters(const ParsedKernel& k, int function);

// `p[i]` -> `__ldg(&p[i])` for every read of a parameter in `params`.
std::string rewrite_ldg(std::string_view text, const std::set<std::string>& params, int* sites = nullptr);

// expf -> __expf and friends.
std::string rewrite_fastmath(std::string_view text, int* sites = nullptr);

struct HeaderEdits {
  std::set<std::string> restrict_params;
  std::optional<std::pair<int, int>> launch_bounds;   // max threads, min blocks (0: none)
  std::map<std::string, std::string> constants;       // parameter -> literal
};

// Rewrites a function header rule's text; `offset` is where the rule starts
// in the seed, so parameter tokens can be found by their seed offsets.
// Constant specialisation renames the parameter (the launch ABI is kept) and
// returns the constexpr lines to put at the top of the body in `body_lines`.
std::string rewrite_header(const Grammar& g, std::size_t rule, const HeaderEdits& edits,
                           std::vector<std::string>& body_lines);

// Parameters that constant specialisation may fix: scalar arithmetic, never assigned.
bool specialisable(const Param& p);
// A literal of the parameter's type, or nullopt if `literal` is not a number of that kind.
std::optional<std::string> constant_literal(const Param& p, const std::string& literal);

}  // namespace gi::grammar
