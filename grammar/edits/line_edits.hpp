#pragma once
// What the line families (delete, replace, insert) and the line-level CUDA
// families (ldg, fastmath) share: finding the rule an edit names, and the
// shape of a family that rewrites the tokens of one line.
#include <functional>
#include <optional>
#include <string>

#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar::edits {

struct NamedRule {
  std::size_t index = 0;
  bool sub = false;  // the name was of its IF/type sub-rule
};

inline std::optional<NamedRule> named_rule(const Grammar& g, const std::string& name) {
  bool sub = false;
  const auto i = g.find(name, &sub);
  if (!i) return std::nullopt;
  return NamedRule{*i, sub};
}

// `family:<_k.cu_N>`: a token rewrite of one statement, declaration or if
// line, legal where the rewrite has at least one site on that line.
class LineRewriteFamily : public EditFamily {
 public:
  EditGroup group() const override { return EditGroup::Cuda; }
  std::string syntax() const override { return name() + ":<_k.cu_N>"; }
  void parse(ArgumentReader& r, Edit& e) const override { e.target = r.rule_ref(); }
  std::string print(const Edit& e) const override { return name() + ":" + e.target; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const auto t = named_rule(g, e.target);
    if (!t) return "unknown rule " + e.target;
    if (t->sub || !line_edit_target(g.rule(t->index).kind)) return e.target + " is not a statement, declaration or if line";
    if (sites(g, t->index) == 0) return "no " + name() + " site on " + e.target;
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext&) const override {
    std::vector<Edit> out;
    for (std::size_t i = 0; i < g.rules().size(); ++i)
      if (line_edit_target(g.rule(i).kind) && sites(g, i) > 0) out.push_back(Edit{name(), g.rule_name(i), "", 0, 0, ""});
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& s) const override {
    const std::size_t rule = *g.find(e.target);
    s.rules[rule].rewrites[name()] = rewriter(g, rule);
  }

 protected:
  // How many places of the seed rule the rewrite changes.
  virtual int sites(const Grammar& g, std::size_t rule) const = 0;
  // The rewrite of that rule's text (applied to its text in the variant).
  virtual std::function<std::string(const std::string&)> rewriter(const Grammar& g, std::size_t rule) const = 0;
};

}  // namespace gi::grammar::edits
