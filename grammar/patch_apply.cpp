#include "grammar/patch_apply.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/source_error.hpp"
#include "grammar/switches.hpp"
#include "grammar/token.hpp"
#include "grammar/unified_diff.hpp"

namespace gi::grammar {
namespace {

std::string indentation(const std::string& text) {
  return text.substr(0, text.find_first_not_of(" \t"));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// Moves a copied rule to a new indentation, keeping its lines' relative layout.
std::string reindent(const std::string& text, const std::string& indent) {
  const std::vector<std::string> lines = split_lines(text);
  std::size_t common = std::string::npos;
  for (const auto& l : lines) {
    const std::size_t first = l.find_first_not_of(" \t");
    if (first != std::string::npos) common = std::min(common, first);
  }
  if (common == std::string::npos) common = 0;
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += indent + (lines[i].size() >= common ? lines[i].substr(common) : std::string());
  }
  return out;
}

// Indentation for lines placed right after rule i: that of the next
// non-blank line when it is deeper (the body of a header), else i's own,
// one level deeper after an opening brace.
std::string inner_indentation(const Grammar& g, std::size_t i) {
  const std::string& text = g.rule(i).text;
  const std::string own = indentation(text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1));
  const bool opens = !text.empty() && text.back() == '{';
  for (std::size_t j = i + 1; j < g.rules().size(); ++j) {
    const std::string& next = g.rule(j).text;
    if (next.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string deeper = indentation(next);
    if (opens && deeper.size() > own.size()) return deeper;
    break;
  }
  return opens ? own + "    " : indentation(text);
}

PatchState collect(const Grammar& g, const Patch& patch, const EditContext& context) {
  PatchState state;
  state.rules.resize(g.rules().size());
  state.launch.switches = switch_values(g, context);
  for (const Edit& e : patch.edits) edit_family(e.family).apply(g, context, e, state);
  return state;
}

// Writes the rules with their changes. Lines inside a wrap get one more
// level of indentation (preprocessor lines stay in column 0).
class Writer {
 public:
  void push(const std::string& text) {
    for (const std::string& line : split_lines(text))
      out_.push_back(extra_.empty() || line.empty() || line[0] == '#' ? line : extra_ + line);
  }
  void deeper() { extra_ += "    "; }
  void shallower() { extra_.resize(extra_.size() >= 4 ? extra_.size() - 4 : 0); }
  std::string text(bool final_newline) const {
    std::string result;
    for (std::size_t i = 0; i < out_.size(); ++i) {
      if (i) result += '\n';
      result += out_[i];
    }
    if (final_newline) result += '\n';
    return result;
  }

 private:
  std::vector<std::string> out_;
  std::string extra_;
};

// The wraps that open at rule i, outermost (last ending) first, and those
// that close after it, innermost first.
std::vector<const Wrap*> wraps_opening(const PatchState& s, std::size_t i) {
  std::vector<const Wrap*> out;
  for (const auto& [key, wrap] : s.wraps)
    if (wrap.first == i) out.push_back(&wrap);
  std::sort(out.begin(), out.end(), [](const Wrap* a, const Wrap* b) { return a->last > b->last; });
  return out;
}
std::vector<const Wrap*> wraps_closing(const PatchState& s, std::size_t i) {
  std::vector<const Wrap*> out;
  for (const auto& [key, wrap] : s.wraps)
    if (wrap.last == i) out.push_back(&wrap);
  std::sort(out.begin(), out.end(), [](const Wrap* a, const Wrap* b) { return a->first > b->first; });
  return out;
}

std::string write(const Grammar& g, const PatchState& s, bool device_only) {
  Writer w;
  std::map<const Wrap*, std::string> wrap_indent;
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    const Rule& r = g.rule(i);
    const RuleContext& c = g.context(i);
    const RuleChange& change = s.rules[i];
    const std::string indent = indentation(r.text);
    // Every line this rule gives the variant, through its function's rewrites.
    auto push = [&](std::string text) {
      for (const auto& [family, f] : s.function_rewrites)
        if (f.function == c.function) text = f.rewrite(text);
      w.push(text);
    };
    for (const auto& [family, line] : change.line_before_wraps) push(indent + line);
    for (const Wrap* wrap : wraps_opening(s, i)) {
      wrap_indent[wrap] = indent;
      for (const std::string& line : wrap->open) push(indent + line);
      w.deeper();
    }
    for (const auto& [family, line] : change.line_before) push(indent + line);
    std::optional<std::string> text = r.text;
    if (change.deleted || change.dropped) {
      // A brace-less body cannot vanish: the header would swallow the next line.
      text = c.braceless_body ? std::optional<std::string>(indent + ";") : std::nullopt;
    } else if (change.replaced_by) {
      text = reindent(g.rule(*change.replaced_by).text, indent);
    } else if (change.sub_text) {
      text = r.text.substr(0, r.sub.offset) + *change.sub_text + r.text.substr(r.sub.offset + r.sub.length);
    } else if (change.text) {
      text = change.text;
    }
    if (device_only && c.host_code) {  // fixed: no edit reaches it
      for (int line = r.first_line; line <= r.last_line; ++line) w.push("");
      continue;
    }
    std::vector<std::string> body_lines;
    if (text) {
      for (const auto& [family, rewrite] : change.rewrites) *text = rewrite(*text);
      if (c.function_header >= 0) *text = rewrite_header(g, i, s.header, body_lines);
      push(*text);
    }
    const std::string inner = inner_indentation(g, i);
    for (const auto& line : body_lines) push(inner + line);
    for (std::size_t source : change.copies_after) push(reindent(g.rule(source).text, inner));
    for (const Wrap* wrap : wraps_closing(s, i)) {
      w.shallower();
      for (const std::string& line : wrap->close) push(wrap_indent[wrap] + line);
    }
  }
  return w.text(g.final_newline());
}

std::string switches_text(const std::map<std::string, std::string>& switches) {
  LaunchEffect effect;
  effect.switches = switches;
  return to_string(effect);
}

// Two wraps either nest or stand apart: overlapping ones would cross braces.
void check_wraps_nest(const Grammar& g, const PatchState& state) {
  for (const auto& [a_key, a] : state.wraps)
    for (const auto& [b_key, b] : state.wraps) {
      if (a_key >= b_key) continue;
      const bool apart = a.last < b.first || b.last < a.first;
      const bool nested = (a.first <= b.first && b.last <= a.last) || (b.first <= a.first && a.last <= b.last);
      if (!apart && !nested)
        throw PatchError("the regions of " + a_key + " (lines " + std::to_string(g.rule(a.first).first_line) + "-" +
                         std::to_string(g.rule(a.last).last_line) + ") and " + b_key + " (lines " +
                         std::to_string(g.rule(b.first).first_line) + "-" + std::to_string(g.rule(b.last).last_line) +
                         ") overlap without one inside the other");
    }
}

}  // namespace

namespace {

// A transformation family's rewrite needs every thread at its barriers and
// shuffles (grammar/edits/aggregate.cpp, privatise.cpp), which the analysis
// proved on the seed; a line edit of the same patch must not bring in what
// would break that: a copy of a return (some threads would leave early) or
// of a barrier or warp collective (now inside a region threads reach apart).
void check_transforms_keep_threads_together(const Grammar& g, const Patch& patch) {
  const bool transformed = std::any_of(patch.edits.begin(), patch.edits.end(), [](const Edit& e) {
    const EditFamily* f = find_edit_family(e.family);
    return f != nullptr && f->needs_threads_together();
  });
  if (!transformed) return;
  for (std::size_t i = 0; i < patch.edits.size(); ++i) {
    const Edit& e = patch.edits[i];
    if (e.source.empty() || (e.family != "replace" && e.family != "insert")) continue;
    const auto source = g.find(e.source);
    if (!source) continue;
    const std::string& text = g.rule(*source).text;
    for (const char* word : {"return", "__syncthreads", "__syncwarp", "_sync("})
      if (text.find(word) != std::string::npos)
        throw PatchError("edit " + std::to_string(i + 1) + " '" + to_string(e) + "': copies a line with " + word +
                         " into a kernel a transformation family rewrites, whose threads must all reach its barriers");
  }
}

// remap swaps the thread axes of everything the kernel's text says; what
// aggregate, privatise, scatter_cache and warp_per_item add assumes lanes and
// block-wide loops along x (a warp's shuffles, `k += blockDim.x`), which
// the swap would turn to y. coarsen's loop and merge_runs' registers are a
// thread's own, so they swap with the rest.
void check_remap_composes(const Patch& patch) {
  const auto remap = std::find_if(patch.edits.begin(), patch.edits.end(), [](const Edit& e) { return e.family == "remap"; });
  if (remap == patch.edits.end()) return;
  for (const Edit& e : patch.edits)
    for (const char* family : {"aggregate", "privatise", "scatter_cache", "warp_per_item"})
      if (e.family == family)
        throw PatchError("remap and " + std::string(family) +
                         " do not compose: its warps and block-wide loops walk the x axis, which remap swaps");
}

// stage copies out a block's records as consecutive items
// blockIdx.x * blockDim.x + threadIdx.x, one a thread, into dynamic shared
// memory of its own; the families that give a thread other items (or
// several), or that own the dynamic shared memory, break that.
void check_stage_composes(const LaunchEffect& launch) {
  if (launch.staged.empty()) return;
  std::string other;
  if (launch.coarsen != 1) other = "coarsen";
  else if (launch.group != 1) other = "warp_per_item";
  else if (launch.grid_threads != 0 || !launch.private_buffer.empty()) other = "privatise";
  else if (!launch.swap_axes.empty()) other = "remap";
  if (!other.empty())
    throw PatchError("stage and " + other + " do not compose: stage's block writes its threads' records as consecutive items, one a thread");
}

// factor's partial sums are a thread's own: warp_per_item on the same loop
// nest shares the loop among lanes (and may collapse the nest), so each
// lane would scale a partial of its own passes and the lanes' shuffle would
// add sums that factor's post-loop lines already scaled.
void check_factor_composes(const Grammar& g, const PatchState& state) {
  for (const auto& [f_key, f] : state.wraps) {
    if (f_key.rfind("factor:", 0) != 0) continue;
    for (const auto& [w_key, w] : state.wraps)
      if (w_key.rfind("warp_per_item:", 0) == 0 && !(w.last < f.first || f.last < w.first))
        throw PatchError("factor and warp_per_item do not compose on one loop nest (lines " +
                         std::to_string(g.rule(f.first).first_line) + " and " + std::to_string(g.rule(w.first).first_line) +
                         "): warp_per_item shares the loop among lanes and may collapse its nest");
  }
}

// A line edit may not undo what a rewrite of the same patch relies on
// (PatchState::line_guards): delete or replace a line it reads, or copy
// into its loop a line naming what it moved (a copied line is a seed rule,
// which tokenizes on its own: its names are its identifiers, not the words
// of its comments or strings).
void check_line_guards(const Grammar& g, const Patch& patch, const PatchState& state) {
  for (std::size_t i = 0; i < patch.edits.size(); ++i) {
    const Edit& e = patch.edits[i];
    if (e.family != "delete" && e.family != "replace" && e.family != "insert") continue;
    const auto target = g.find(e.target);
    const auto source = e.source.empty() ? std::nullopt : g.find(e.source);
    if (!target) continue;
    for (const LineGuard& guard : state.line_guards) {
      const std::string edit = "edit " + std::to_string(i + 1) + " '" + to_string(e) + "': ";
      if (e.family != "insert" && guard.rules.count(*target))
        throw PatchError(edit + "changes line " + std::to_string(g.rule(*target).first_line) + ", which " + guard.by +
                         " reads");
      if (!source || e.family == "delete" || *target < guard.first || *target > guard.last) continue;
      std::vector<Token> tokens;
      try {
        tokens = tokenize(g.rule(*source).text, g.file_name());
      } catch (const SourceError&) {  // a line a comment spans: refused, as its names are not known
        throw PatchError(edit + "copies a line gi cannot read on its own into the loop " + guard.by + " rewrites");
      }
      for (const Token& t : tokens)
        if (t.kind == TokenKind::Identifier && guard.names.count(t.text))
          throw PatchError(edit + "copies a line naming " + t.text + " into the loop " + guard.by + " rewrites");
    }
  }
}

}  // namespace

void validate_patch(const Grammar& g, const Patch& patch, const EditContext& context) {
  for (std::size_t i = 0; i < patch.edits.size(); ++i)
    if (auto problem = edit_problem(g, context, patch.edits[i]))
      throw PatchError("edit " + std::to_string(i + 1) + " '" + to_string(patch.edits[i]) + "': " + *problem);
  check_transforms_keep_threads_together(g, patch);
  const PatchState state = collect(g, patch, context);
  check_wraps_nest(g, state);
  if (!state.conflicts.empty()) throw PatchError(state.conflicts.front());
  // Both remake the global index line (K items per thread, G threads per item).
  if (state.launch.coarsen != 1 && state.launch.group != 1)
    throw PatchError("coarsen and warp_per_item both remake the global index: a patch holds one of them");
  check_remap_composes(patch);
  check_stage_composes(state.launch);
  check_factor_composes(g, state);
  check_line_guards(g, patch, state);
  if (context.switches.empty()) return;
  if (!switch_setting_allowed(context.switch_combinations, state.launch.switches))
    throw PatchError("switch setting " + switches_text(state.launch.switches) +
                     " is not one the seed's spec allows (switch_combinations)");
  // A wrapping edit (coarsening, an early exit made a predicate) works on
  // the path the seed compiles by default; with that path switched off its
  // block would wrap dead code (and coarsening's grid would still shrink).
  const std::vector<bool> live = live_lines(g.source(), state.launch.switches, g.file_name());
  for (const auto& [key, wrap] : state.wraps) {
    const auto line = static_cast<std::size_t>(g.rule(wrap.first).first_line);
    if (line < live.size() && !live[line])
      throw PatchError("the region a " + key + " edit wraps (line " + std::to_string(line) +
                       ") is not compiled under switch setting " + switches_text(state.launch.switches));
  }
}

PatchedKernel patch_kernel(const Grammar& g, const Patch& patch, const EditContext& context) {
  validate_patch(g, patch, context);
  const PatchState state = collect(g, patch, context);
  return PatchedKernel{write(g, state, false), write(g, state, true), state.launch};
}

std::string apply_patch(const Grammar& g, const Patch& patch, const EditContext& context) {
  return patch_kernel(g, patch, context).source;
}

std::string patch_diff(const Grammar& g, const Patch& patch, const std::string& path, const EditContext& context) {
  return unified_diff(g.source(), apply_patch(g, patch, context), "a/" + path, "b/" + path);
}

}  // namespace gi::grammar
