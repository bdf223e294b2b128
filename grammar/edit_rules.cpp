#include "grammar/edit_rules.hpp"

#include "grammar/edit_family.hpp"

namespace gi::grammar {
namespace {

// Every identifier of `source` must mean at (block, pos) what it meant where
// the source line stands: the same declaration, or a builtin both times.
bool identifiers_keep_meaning(const Grammar& g, std::size_t source, int block, int pos) {
  const RuleContext& s = g.context(source);
  for (const auto& id : s.identifiers)
    if (resolve(g.parsed(), id, s.block, s.pos) != resolve(g.parsed(), id, block, pos)) return false;
  return true;
}

// Every local scalar `source` reads must have been given a value before
// `pos` in the file (grammar/local_assignments.hpp): a copy must not read an
// uninitialised variable.
bool reads_only_assigned(const Grammar& g, std::size_t source, int block, int pos) {
  const RuleContext& s = g.context(source);
  for (const auto& id : s.reads) {
    const int d = resolve(g.parsed(), id, block, pos);
    if (d >= 0 && !g.assignments().assigned_before(g.parsed(), d, block, pos)) return false;
  }
  return true;
}

bool loop_needs_met(const Grammar& g, std::size_t source, int block) {
  const RuleContext& s = g.context(source);
  if (s.uses_continue && !in_loop(g.parsed(), block)) return false;
  if (s.uses_break && !in_breakable(g.parsed(), block)) return false;
  return true;
}

}  // namespace

const Param* kernel_param(const Grammar& g, const std::string& name) {
  for (const auto& f : g.parsed().functions)
    if (f.is_kernel)
      for (const auto& p : f.params)
        if (p.name == name) return &p;
  return nullptr;
}

bool line_edit_target(RuleKind k) {
  return k == RuleKind::Statement || k == RuleKind::Declaration || k == RuleKind::If;
}

bool can_replace_statement(const Grammar& g, std::size_t target, std::size_t source) {
  if (target == source) return false;
  const RuleContext& t = g.context(target);
  return g.rule(target).kind == RuleKind::Statement && g.rule(source).kind == RuleKind::Statement &&
         g.context(source).function == t.function && (!t.braceless_body || g.context(source).statements == 1) &&
         identifiers_keep_meaning(g, source, t.block, t.pos) && reads_only_assigned(g, source, t.block, t.pos) &&
         loop_needs_met(g, source, t.block);
}

bool can_replace_condition(const Grammar& g, std::size_t target, std::size_t source) {
  if (target == source) return false;
  const RuleContext& t = g.context(target);
  return g.rule(target).kind == RuleKind::If && g.rule(source).kind == RuleKind::If &&
         g.context(source).function == t.function && identifiers_keep_meaning(g, source, t.block, t.pos) &&
         reads_only_assigned(g, source, t.block, t.pos);
}

bool can_insert_after(const Grammar& g, std::size_t anchor, std::size_t source) {
  const RuleContext& a = g.context(anchor);
  if (!a.anchor_ok || g.rule(source).kind != RuleKind::Statement) return false;
  const int function = g.parsed().blocks[a.block_after].function;
  return g.context(source).function == function &&
         identifiers_keep_meaning(g, source, a.block_after, a.pos_after) &&
         reads_only_assigned(g, source, a.block_after, a.pos_after) && loop_needs_met(g, source, a.block_after);
}

std::optional<std::string> edit_problem(const Grammar& g, const EditContext& context, const Edit& e) {
  const EditFamily* family = find_edit_family(e.family);
  if (family == nullptr) return "unknown edit family '" + e.family + "'";
  return family->problem(g, context, e);
}

std::optional<std::string> edit_problem(const Grammar& g, const Edit& e) { return edit_problem(g, EditContext{}, e); }

}  // namespace gi::grammar
