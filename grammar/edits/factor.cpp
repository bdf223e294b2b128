// factor: `factor:<for_k.cu_N>` sums the loop of line N's terms without the
// factors the loop does not change, and multiplies each sum by them once
// after the loop (distributivity: sum_a f(a) * g * v(a) = g * sum_a f(a) * v(a)).
// A B-spline kernel's innermost loop then sums xBasis[a] * P.x instead of
// xBasis[a] * yBasis[b] * zBasis[c] * P.x, and the sums that share what is
// left (two of a Jacobian's nine entries) share one partial sum:
//
//     {  // gi factor: ...
//         float gi_factor_86_0 = 0.0f;  // xDerivative[a] * controlPoint.x
//         for (int a = 0; a < 4; a++) {
//             ...
//             gi_factor_86_0 += xDerivative[a] * controlPoint.x;
//         }
//         jacobian[0] += gi_factor_86_0 * yBasis[b] * zBasis[c];
//     }
//
// The sites and why other loops are none: analysis/factor_sites.hpp. The
// sums are reassociated, which the seed's tolerance judges as for any
// variant. No launch changes and no barrier or shuffle: it composes with
// every family but warp_per_item on the same loop or one around it (which
// shares the loop among lanes and may collapse its nest). A line edit of
// the same patch may not delete or replace a line the rewrite reads, nor
// copy into the loop a line naming what it moved (PatchState::line_guards).
#include "analysis/factor_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

analysis::FactorSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_factor_sites(g.parsed(), edits::live_tokens(g, context));
}

// Each accumulation must be a line of its own: the rewrite replaces its line.
std::optional<std::string> shared_line(const Grammar& g, const analysis::FactorSite& site) {
  for (const auto& sum : site.sums) {
    const std::size_t rule = g.rule_of_element(sum.statement);
    if (g.context(rule).statements != 1)
      return "line " + std::to_string(g.rule(rule).first_line) + " holds more than the sum " + sum.accumulator;
  }
  return std::nullopt;
}

const analysis::FactorSite* site_at(const Grammar& g, const analysis::FactorSites& sites, std::size_t rule) {
  for (const auto& s : sites.sites)
    if (g.rule_of_element(s.loop) == rule && !shared_line(g, s)) return &s;
  return nullptr;
}

class FactorFamily : public EditFamily {
 public:
  std::string name() const override { return "factor"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "factor:<for_k.cu_N> (N: a loop whose sums have factors the loop does not change)";
  }

  // Arithmetic only: no barrier or shuffle a copied return could skip.
  bool needs_threads_together() const override { return false; }

  void parse(ArgumentReader& r, Edit& e) const override { e.target = r.rule_ref(); }
  std::string print(const Edit& e) const override { return "factor:" + e.target; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown rule " + e.target;
    const auto sites = sites_of(g, context);
    if (site_at(g, sites, t->index)) return std::nullopt;
    const int line = g.rule(t->index).first_line;
    for (const auto& s : sites.sites)
      if (g.rule_of_element(s.loop) == t->index) return "no factor site: " + *shared_line(g, s);
    for (const auto* list : {&sites.refusals, &sites.nothing_to_move})
      for (const std::string& refusal : *list)
        if (refusal.rfind("line " + std::to_string(line) + ":", 0) == 0) return "no factor site: " + refusal;
    return e.target + " is no innermost for loop with a float sum at its top (or lies on a switch path the seed's default setting leaves out)";
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const auto& s : sites_of(g, context).sites)
      if (!shared_line(g, s)) out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.loop)), "", 0, 0, ""});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    auto sites = sites_of(g, context);
    for (const auto& s : sites.sites)
      if (auto why = shared_line(g, s)) sites.refusals.push_back(*why);
    return sites.refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    const std::size_t rule = *g.find(e.target);
    const analysis::FactorSite& site = *site_at(g, sites, rule);
    const std::size_t close = g.rule_of_element(site.body_close);
    std::size_t first = rule;
    // A `#pragma unroll` of the seed's stays right before its loop.
    if (first > 0 && g.rule(first - 1).kind == RuleKind::Pragma) --first;

    const std::string prefix = "gi_factor_" + std::to_string(g.rule(rule).first_line) + "_";
    std::vector<std::string> open = {
        "{  // gi factor: the loop sums only what changes in it; the factors it leaves unchanged multiply each sum once after it"};
    for (std::size_t p = 0; p < site.partials.size(); ++p)
      open.push_back("    " + site.partials[p].type + " " + prefix + std::to_string(p) + " = " +
                     (site.partials[p].type == "float" ? "0.0f" : "0.0") + ";  // " + site.partials[p].varying);
    std::vector<std::string> done;
    std::vector<bool> summed(site.partials.size(), false);
    for (const auto& sum : site.sums) {
      const std::string partial = prefix + std::to_string(sum.partial);
      const std::size_t at = g.rule_of_element(sum.statement);
      const std::string indent = edits::indentation_of(g.rule(at).text);
      s.rules[at].text = summed[sum.partial]
                             ? indent + "// gi factor: " + sum.accumulator + " takes its sum from " + partial
                             : indent + partial + " += " + sum.varying + ";";
      summed[sum.partial] = true;
      done.push_back("    " + sum.accumulator + " " + sum.op + " " + partial + sum.invariant + ";");
    }
    done.push_back("}");
    for (std::size_t element : site.dead_definitions) s.rules[g.rule_of_element(element)].dropped = true;
    s.wraps[name() + ":" + std::to_string(rule)] = Wrap{first, close, open, done};

    LineGuard guard{print(e), rule, close, {}, site.guarded_names};
    for (std::size_t element : site.protected_elements) guard.rules.insert(g.rule_of_element(element));
    s.line_guards.push_back(std::move(guard));
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::FactorFamily)
