// insert: `<_k.cu_42>+<_k.cu_7>` puts a copy of statement 7 after line 42
// (Langdon), only where every name it uses means what it meant at line 7 and
// never between a header and its body, before an else, or after a pragma.
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class InsertFamily : public EditFamily {
 public:
  std::string name() const override { return "insert"; }
  EditGroup group() const override { return EditGroup::Line; }
  std::string syntax() const override { return "<_k.cu_N>+<_k.cu_M>"; }
  std::string print(const Edit& e) const override { return e.target + "+" + e.source; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const auto a = edits::named_rule(g, e.target);
    const auto s = edits::named_rule(g, e.source);
    if (!a) return "unknown rule " + e.target;
    if (!s) return "unknown rule " + e.source;
    if (a->sub || s->sub) return "insert takes line rules, not sub-rules";
    if (g.rule(s->index).kind != RuleKind::Statement) return e.source + " is not a statement: only statements are copied";
    if (!g.context(a->index).anchor_ok)
      return "nothing may be inserted after " + e.target +
             " (outside a function body, between a header and its body, before else/while, after a pragma)";
    if (!can_insert_after(g, a->index, s->index))
      return e.source + " cannot stand after " + e.target +
             ": a name it uses is not declared there (or means another variable), it reads a local before"
             " anything assigns it there, or it needs a loop";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext&) const override {
    std::vector<Edit> out;
    for (std::size_t a = 0; a < g.rules().size(); ++a) {
      if (!g.context(a).anchor_ok) continue;
      for (std::size_t s = 0; s < g.rules().size(); ++s)
        if (can_insert_after(g, a, s)) out.push_back(Edit{name(), g.rule_name(a), g.rule_name(s), 0, 0, ""});
    }
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& state) const override {
    state.rules[*g.find(e.target)].copies_after.push_back(*g.find(e.source));
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::InsertFamily)
