#pragma once
// What the families that rewrite atomic sites share (aggregate.cpp,
// privatise.cpp): the tokens the seed's default switch setting compiles, the
// site an edit names, text helpers, and the step that makes every thread
// reach the kernel's end, where both put a barrier.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "analysis/aggregate_sites.hpp"
#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar::edits {

// Whether a token of `g` is compiled under the default switch setting (every
// family whose sites an analysis finds passes it, so dead paths have none).
std::function<bool(std::size_t)> live_tokens(const Grammar& g, const EditContext& context);

// The site whose statement is rule `rule`, or nullptr.
const analysis::AggregateSite* site_at(const Grammar& g, const analysis::AggregateSites& sites, std::size_t rule);

// Why statement rule `rule` (named `target`) is no site of `family`: the
// analysis's refusal for its line, else that it is no atomic statement.
std::string why_no_site(const Grammar& g, const analysis::AggregateSites& sites, std::size_t rule,
                        const std::string& target, const std::string& family);

std::string indentation_of(const std::string& text);
// Lines joined by a newline and `indent`.
std::string joined(const std::vector<std::string>& lines, const std::string& indent);

// `into` combined with `value` by the operation `kind` (add, min, max, and,
// or, xor), as a statement.
std::string combine(const std::string& kind, const std::string& into, const std::string& value);
// The site's value, converted to its type, combined into `into`: the atomic
// made on a register.
std::string combine_value(const analysis::AggregateSite& site, const std::string& into);

// Drops the site's trailing returns and turns its early exit into a
// predicate around the rest of the body (kEarlyExitWrap), so every thread
// reaches the code put before the body's closing brace.
void keep_every_thread_to_the_end(const Grammar& g, const analysis::AggregateSite& site, PatchState& s);

}  // namespace gi::grammar::edits
