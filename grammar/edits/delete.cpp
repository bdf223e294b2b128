// delete: `<_k.cu_42>` removes a statement or `#pragma unroll` line (Langdon).
#include "grammar/edit_family.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class DeleteFamily : public EditFamily {
 public:
  std::string name() const override { return "delete"; }
  EditGroup group() const override { return EditGroup::Line; }
  std::string syntax() const override { return "<_k.cu_N>"; }
  std::string print(const Edit& e) const override { return e.target; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    if (!t) return "unknown rule " + e.target;
    const RuleKind k = g.rule(t->index).kind;
    if (t->sub || (k != RuleKind::Statement && k != RuleKind::Pragma))
      return e.target + " is fixed structure: only statement and pragma lines can be deleted";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext&) const override {
    std::vector<Edit> out;
    for (std::size_t i = 0; i < g.rules().size(); ++i)
      if (g.rule(i).kind == RuleKind::Statement || g.rule(i).kind == RuleKind::Pragma)
        out.push_back(Edit{name(), g.rule_name(i), "", 0, 0, ""});
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& s) const override {
    RuleChange& r = s.rules[*g.find(e.target)];
    r.deleted = true;
    r.replaced_by.reset();
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::DeleteFamily)
