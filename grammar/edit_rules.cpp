#include "grammar/edit_rules.hpp"

#include "grammar/cuda_rewrites.hpp"

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

bool loop_needs_met(const Grammar& g, std::size_t source, int block) {
  const RuleContext& s = g.context(source);
  if (s.uses_continue && !in_loop(g.parsed(), block)) return false;
  if (s.uses_break && !in_breakable(g.parsed(), block)) return false;
  return true;
}

const Param* kernel_param(const Grammar& g, const std::string& name) {
  for (const auto& f : g.parsed().functions)
    if (f.is_kernel)
      for (const auto& p : f.params)
        if (p.name == name) return &p;
  return nullptr;
}

int count_sites(const Grammar& g, std::size_t rule, EditType type) {
  int sites = 0;
  const RuleContext& c = g.context(rule);
  if (type == EditType::Ldg) rewrite_ldg(g.rule(rule).text, ldg_parameters(g.parsed(), c.function), &sites);
  if (type == EditType::FastMath) rewrite_fastmath(g.rule(rule).text, &sites);
  return sites;
}

bool line_edit_target(RuleKind k) {
  return k == RuleKind::Statement || k == RuleKind::Declaration || k == RuleKind::If;
}

}  // namespace

bool can_replace_statement(const Grammar& g, std::size_t target, std::size_t source) {
  if (target == source) return false;
  const RuleContext& t = g.context(target);
  return g.rule(target).kind == RuleKind::Statement && g.rule(source).kind == RuleKind::Statement &&
         g.context(source).function == t.function && (!t.braceless_body || g.context(source).statements == 1) &&
         identifiers_keep_meaning(g, source, t.block, t.pos) && loop_needs_met(g, source, t.block);
}

bool can_replace_condition(const Grammar& g, std::size_t target, std::size_t source) {
  if (target == source) return false;
  const RuleContext& t = g.context(target);
  return g.rule(target).kind == RuleKind::If && g.rule(source).kind == RuleKind::If &&
         g.context(source).function == t.function && identifiers_keep_meaning(g, source, t.block, t.pos);
}

bool can_insert_after(const Grammar& g, std::size_t anchor, std::size_t source) {
  const RuleContext& a = g.context(anchor);
  if (!a.anchor_ok || g.rule(source).kind != RuleKind::Statement) return false;
  const int function = g.parsed().blocks[a.block_after].function;
  return g.context(source).function == function &&
         identifiers_keep_meaning(g, source, a.block_after, a.pos_after) &&
         loop_needs_met(g, source, a.block_after);
}

EditSites find_edit_sites(const Grammar& g) {
  EditSites s;
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    const Rule& r = g.rule(i);
    const RuleContext& c = g.context(i);
    if (r.kind == RuleKind::Statement) s.statements.push_back(i);
    if (r.kind == RuleKind::Pragma) s.pragmas.push_back(i);
    if (r.kind == RuleKind::If) s.conditions.push_back(i);
    if (r.sub_kind == SubKind::Type) s.types.push_back(i);
    if (c.anchor_ok) s.anchors.push_back(i);
    if (r.kind == RuleKind::For) s.for_loops.push_back(i);
    if (line_edit_target(r.kind) && count_sites(g, i, EditType::Ldg) > 0) s.ldg_rules.push_back(i);
    if (line_edit_target(r.kind) && count_sites(g, i, EditType::FastMath) > 0) s.fastmath_rules.push_back(i);
  }
  for (const auto& f : g.parsed().functions) {
    if (!f.is_kernel) continue;
    for (const auto& p : f.params) {
      if (p.pointer && !p.restrict_qualified) s.restrict_params.push_back(p.name);
      if (specialisable(p)) s.const_params.push_back({p.name, p.base_type});
    }
  }
  return s;
}

std::optional<std::string> edit_problem(const Grammar& g, const Edit& e) {
  auto lookup = [&](const std::string& name, bool& sub) -> std::optional<std::size_t> {
    return g.find(name, &sub);
  };
  bool target_sub = false, source_sub = false;
  switch (e.type) {
    case EditType::Delete: {
      const auto t = lookup(e.target, target_sub);
      if (!t) return "unknown rule " + e.target;
      const RuleKind k = g.rule(*t).kind;
      if (target_sub || (k != RuleKind::Statement && k != RuleKind::Pragma))
        return e.target + " is fixed structure: only statement and pragma lines can be deleted";
      return std::nullopt;
    }
    case EditType::Replace: {
      const auto t = lookup(e.target, target_sub);
      const auto s = lookup(e.source, source_sub);
      if (!t) return "unknown rule " + e.target;
      if (!s) return "unknown rule " + e.source;
      if (target_sub != source_sub || g.rule(*t).kind != g.rule(*s).kind)
        return "rule types differ: " + e.target + " can only be replaced by a rule of its own type";
      const Rule& tr = g.rule(*t);
      if (target_sub) {
        if (tr.sub_kind == SubKind::Condition) {
          if (!can_replace_condition(g, *t, *s))
            return "condition " + e.source + " uses names that mean something else (or nothing) at " + e.target;
        } else if (g.context(*t).type_class != g.context(*s).type_class) {
          return "type " + e.source + " is not of the same class (floating/integer) as " + e.target;
        }
        return std::nullopt;
      }
      if (tr.kind == RuleKind::Pragma) return std::nullopt;
      if (tr.kind != RuleKind::Statement)
        return e.target + " is fixed structure: only statements, pragmas, IF conditions and types are replaced";
      if (!can_replace_statement(g, *t, *s))
        return e.source + " cannot stand at " + e.target +
               ": a name it uses is not declared there (or means another variable), it needs a loop, or it"
               " holds more than one statement for a brace-less body";
      return std::nullopt;
    }
    case EditType::Insert: {
      const auto a = lookup(e.target, target_sub);
      const auto s = lookup(e.source, source_sub);
      if (!a) return "unknown rule " + e.target;
      if (!s) return "unknown rule " + e.source;
      if (target_sub || source_sub) return "insert takes line rules, not sub-rules";
      if (g.rule(*s).kind != RuleKind::Statement) return e.source + " is not a statement: only statements are copied";
      if (!g.context(*a).anchor_ok)
        return "nothing may be inserted after " + e.target +
               " (outside a function body, before else/while, after a pragma or a brace-less header)";
      if (!can_insert_after(g, *a, *s))
        return e.source + " cannot stand after " + e.target +
               ": a name it uses is not declared there (or means another variable), or it needs a loop";
      return std::nullopt;
    }
    case EditType::Unroll: {
      const auto t = lookup(e.target, target_sub);
      if (!t) return "unknown rule " + e.target;
      if (g.rule(*t).kind != RuleKind::For) return e.target + " is not a for loop header";
      if (e.value < -1 || e.value > 64) return "unroll factor must be -1 (full), 0 (none) or 1..64";
      return std::nullopt;
    }
    case EditType::Ldg:
    case EditType::FastMath: {
      const auto t = lookup(e.target, target_sub);
      if (!t) return "unknown rule " + e.target;
      if (target_sub || !line_edit_target(g.rule(*t).kind)) return e.target + " is not a statement, declaration or if line";
      if (count_sites(g, *t, e.type) == 0)
        return "no " + edit_family(e.type) + " site on " + e.target;
      return std::nullopt;
    }
    case EditType::Restrict: {
      const Param* p = kernel_param(g, e.target);
      if (!p) return "no kernel parameter named " + e.target;
      if (!p->pointer) return "kernel parameter " + e.target + " is not a pointer";
      return std::nullopt;
    }
    case EditType::LaunchBounds:
      if (e.value < 1 || e.value > 1024) return "launch bounds max threads must be 1..1024";
      if (e.value2 < 0 || e.value2 > 32) return "launch bounds min blocks must be 0..32";
      return std::nullopt;
    case EditType::Const: {
      const Param* p = kernel_param(g, e.target);
      if (!p) return "no kernel parameter named " + e.target;
      if (!specialisable(*p)) return "kernel parameter " + e.target + " is not a scalar that the kernel never assigns";
      if (!constant_literal(*p, e.literal)) return "'" + e.literal + "' is not a " + p->base_type + " literal";
      return std::nullopt;
    }
  }
  return "unknown edit type";
}

}  // namespace gi::grammar
