// ldg: `ldg:<_k.cu_42>` reads the read-only pointer parameters of that line
// through __ldg (the read-only data cache): `p[i]` -> `__ldg(&p[i])`.
#include "grammar/cuda_rewrites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

int ldg_sites(const Grammar& g, std::size_t rule) {
  int sites = 0;
  rewrite_ldg(g.rule(rule).text, ldg_parameters(g.parsed(), g.context(rule).function), &sites);
  return sites;
}

class LdgFamily : public EditFamily {
 public:
  std::string name() const override { return "ldg"; }
  EditGroup group() const override { return EditGroup::Cuda; }
  std::string syntax() const override { return "ldg:<_k.cu_N>"; }

  void parse(ArgumentReader& r, Edit& e) const override { e.target = r.rule_ref(); }
  std::string print(const Edit& e) const override { return "ldg:" + e.target; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    if (!t) return "unknown rule " + e.target;
    if (t->sub || !line_edit_target(g.rule(t->index).kind)) return e.target + " is not a statement, declaration or if line";
    if (ldg_sites(g, t->index) == 0) return "no ldg site on " + e.target;
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext&) const override {
    std::vector<Edit> out;
    for (std::size_t i = 0; i < g.rules().size(); ++i)
      if (line_edit_target(g.rule(i).kind) && ldg_sites(g, i) > 0) out.push_back(Edit{name(), g.rule_name(i), "", 0, 0, ""});
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& s) const override {
    const std::size_t rule = *g.find(e.target);
    std::set<std::string> params = ldg_parameters(g.parsed(), g.context(rule).function);
    s.rules[rule].rewrites[name()] = [params](const std::string& text) { return rewrite_ldg(text, params); };
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::LdgFamily)
