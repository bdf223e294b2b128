#pragma once
// What a patch does to the seed, collected edit by edit by the families'
// apply() (grammar/edit_family.hpp) and then written out by apply_patch
// (grammar/patch_apply.cpp). Every slot refers to the seed's rules, so the
// order of rules, and with it the seed's layout, is kept.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "grammar/cuda_rewrites.hpp"
#include "grammar/patch_effect.hpp"

namespace gi::grammar {

struct RuleChange {
  bool deleted = false;                    // a brace-less body becomes `;`
  bool dropped = false;                    // removed whatever other edits say (a pragma an unroll edit took over)
  std::optional<std::size_t> replaced_by;  // a seed rule copied over it, re-indented
  std::optional<std::string> sub_text;     // new text of its IF condition or type sub-rule
  std::optional<std::string> text;         // its whole text replaced (a `#define NAME VALUE` line)
  std::vector<std::size_t> copies_after;   // seed rules copied after it, in edit order
  // One line per family put before the rule (`#pragma unroll 4`); the last
  // edit of a family wins.
  std::map<std::string, std::string> line_before;
  // Lines put before the rule and before any wrap that opens there (what a
  // kernel body needs before everything: a register, a shared copy), by family.
  std::map<std::string, std::string> line_before_wraps;
  // Token rewrites of the rule's text by family (__ldg, fast math); each
  // applied once, in family-name order (they commute).
  std::map<std::string, std::function<std::string(const std::string&)>> rewrites;
};

// Rules [first, last] put inside a new block: `open` lines before `first`,
// `close` lines after `last`, the rules between indented one level more
// (thread coarsening's loop; the predicate an early exit becomes).
struct Wrap {
  std::size_t first = 0, last = 0;
  std::vector<std::string> open, close;
};

// The wrap an early exit `if (COND) return;` becomes, `if (!(COND)) { ... }`:
// one key for every family that needs all threads at the kernel's end
// (aggregate, privatise), so two of them make one predicate.
inline constexpr const char* kEarlyExitWrap = "early-exit";

// A rewrite of every line a function's rules give the variant: their own
// text, the copies put after them, the lines and wraps other families add
// there (remap's swap of the thread axes, which must reach them all).
struct FunctionRewrite {
  int function = -1;  // index into ParsedKernel::functions
  std::function<std::string(const std::string&)> rewrite;
};

// What a rewrite relies on in the seed's lines (factor moves factors out of
// a loop and reads weights through their definitions): validate_patch
// refuses a line edit of the same patch that deletes or replaces one of
// `rules`, or copies into rules [first, last] (after one, or in its place)
// a line that names one of `names`.
struct LineGuard {
  std::string by;  // the edit that needs it, for the message
  std::size_t first = 0, last = 0;
  std::set<std::size_t> rules;
  std::set<std::string> names;
};

struct PatchState {
  std::vector<RuleChange> rules;  // one per seed rule
  // Keyed by family; applied in key order after each line is made.
  std::map<std::string, FunctionRewrite> function_rewrites;
  HeaderEdits header;             // __restrict__, __launch_bounds__, constants
  // Keyed by what makes them ("coarsen", kEarlyExitWrap): a later edit
  // of one key replaces the earlier. Wraps must nest (validate_patch).
  std::map<std::string, Wrap> wraps;
  LaunchEffect launch;            // switch values and grid shrink
  // Why edits of this patch cannot go together, as an edit's apply() finds
  // it (two warp_per_item loops one inside the other); validate_patch
  // rejects a patch with any.
  std::vector<std::string> conflicts;
  std::vector<LineGuard> line_guards;
};

}  // namespace gi::grammar
