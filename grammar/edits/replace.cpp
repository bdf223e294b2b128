// replace: `<_k.cu_42><_k.cu_7>` puts a copy of line 7 where line 42 was
// (Langdon). Statements replace statements, pragmas pragmas, and the
// sub-rules of fixed lines their own kind: an if's condition
// (`<IF_..><IF_..>`) or a declaration's scalar type (`<type_..><type_..>`,
// floating for floating, integer for integer). A copy must keep the meaning
// of every name it uses (grammar/edit_rules.hpp).
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class ReplaceFamily : public EditFamily {
 public:
  std::string name() const override { return "replace"; }
  EditGroup group() const override { return EditGroup::Line; }
  std::string syntax() const override { return "<_k.cu_N><_k.cu_M>"; }
  std::string print(const Edit& e) const override { return e.target + e.source; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    const auto s = edits::named_rule(g, e.source);
    if (!t) return "unknown rule " + e.target;
    if (!s) return "unknown rule " + e.source;
    if (t->sub != s->sub || g.rule(t->index).kind != g.rule(s->index).kind)
      return "rule types differ: " + e.target + " can only be replaced by a rule of its own type";
    const Rule& tr = g.rule(t->index);
    if (t->sub) {
      if (tr.sub_kind == SubKind::Condition) {
        if (!can_replace_condition(g, t->index, s->index))
          return "condition " + e.source + " uses names that mean something else (or nothing) at " + e.target +
                 ", or reads a local before anything assigns it there";
      } else if (g.context(t->index).type_class != g.context(s->index).type_class) {
        return "type " + e.source + " is not of the same class (floating/integer) as " + e.target;
      }
      return std::nullopt;
    }
    if (tr.kind == RuleKind::Pragma) return std::nullopt;
    if (tr.kind != RuleKind::Statement)
      return e.target + " is fixed structure: only statements, pragmas, IF conditions and types are replaced";
    if (!can_replace_statement(g, t->index, s->index))
      return e.source + " cannot stand at " + e.target +
             ": a name it uses is not declared there (or means another variable), it reads a local before"
             " anything assigns it there, it needs a loop, or it holds more than one statement for a brace-less"
             " body";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext&) const override {
    std::vector<Edit> out;
    auto add = [&](std::size_t t, std::size_t s, bool sub) {
      out.push_back(Edit{name(), sub ? g.sub_name(t) : g.rule_name(t), sub ? g.sub_name(s) : g.rule_name(s), 0, 0, ""});
    };
    const std::size_t n = g.rules().size();
    // Legal pairs are enumerated once, so every draw is legal and uniform.
    for (std::size_t t = 0; t < n; ++t) {
      const Rule& tr = g.rule(t);
      for (std::size_t s = 0; s < n; ++s) {
        const Rule& sr = g.rule(s);
        if (tr.kind == RuleKind::Statement && sr.kind == RuleKind::Statement) {
          if (can_replace_statement(g, t, s)) add(t, s, false);
        } else if (tr.kind == RuleKind::If && sr.kind == RuleKind::If) {
          if (can_replace_condition(g, t, s)) add(t, s, true);
        } else if (tr.kind == RuleKind::Pragma && sr.kind == RuleKind::Pragma) {
          if (t != s && tr.text != sr.text) add(t, s, false);
        }
        if (tr.sub_kind == SubKind::Type && sr.sub_kind == SubKind::Type && t != s &&
            g.context(t).type_class == g.context(s).type_class && tr.sub_text() != sr.sub_text())
          add(t, s, true);
      }
    }
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& state) const override {
    bool sub = false;
    const std::size_t t = *g.find(e.target, &sub);
    const std::size_t s = *g.find(e.source);
    RuleChange& r = state.rules[t];
    if (sub) {
      r.sub_text = g.rule(s).sub_text();
    } else {
      r.deleted = false;
      r.replaced_by = s;
    }
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::ReplaceFamily)
