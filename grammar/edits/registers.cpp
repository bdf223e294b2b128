// registers: `registers:<_k.cu_N>=NAME` keeps the small local array NAME,
// declared on line N, in registers: every read of it at a computed index
// becomes a chain of selects with literal indices,
//     basis[a]  ->  (a == 0 ? basis[0] : (a == 1 ? basis[1] : (a == 2 ? basis[2] : basis[3])))
// so that ptxas no longer puts the array in local memory (its "stack
// frame"), where every pass of a loop would store and load it. A kernel
// that picks one of four basis values per voxel (a B-spline's) spends more
// on that local-memory traffic than on its arithmetic.
//
// The sites and why other arrays are none: analysis/register_arrays.hpp. The
// rewrite is a function rewrite (grammar/patch_state.hpp): it reaches every
// line of the declaring function in the variant, copies and other families'
// lines included, and is legal read by read (an index with a side effect is
// left as it is). It changes no launch and composes with every family.
#include "analysis/register_arrays.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

analysis::RegisterArrays sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_register_arrays(g.parsed(), edits::live_tokens(g, context));
}

const analysis::RegisterArray* site_of(const Grammar& g, const analysis::RegisterArrays& sites, const Edit& e) {
  for (const auto& s : sites.sites)
    if (s.name == e.literal && g.rule_name(g.rule_of_element(s.declaration)) == e.target) return &s;
  return nullptr;
}

class RegistersFamily : public EditFamily {
 public:
  std::string name() const override { return "registers"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "registers:<_k.cu_N>=NAME (N: the line declaring the local array NAME, read at a computed index)";
  }

  // It adds no barrier or shuffle: a line edit may copy one beside it.
  bool needs_threads_together() const override { return false; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.rule_ref();
    r.expect('=');
    e.literal = r.identifier();
  }
  std::string print(const Edit& e) const override { return "registers:" + e.target + "=" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown rule " + e.target;
    const auto sites = sites_of(g, context);
    if (site_of(g, sites, e)) return std::nullopt;
    const std::string line = "line " + std::to_string(g.rule(t->index).first_line) + ":";
    for (const std::string& refusal : sites.refusals)
      if (refusal.rfind(line, 0) == 0 && refusal.find(" " + e.literal + " ") != std::string::npos)
        return "no registers site: " + refusal;
    return e.target + " declares no local array " + e.literal + " of a literal size that is read at a computed index";
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const auto& s : sites_of(g, context).sites)
      out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.declaration)), "", 0, 0, s.name});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const analysis::RegisterArrays sites = sites_of(g, context);
    const analysis::RegisterArray& site = *site_of(g, sites, e);
    const std::string array = site.name;
    const int size = site.size;
    // One rewrite per array: the key names it, so several arrays of one function each keep theirs.
    s.function_rewrites[name() + ":" + array + ":" + std::to_string(site.function)] = FunctionRewrite{
        site.function, [array, size](const std::string& text) { return analysis::read_through_selects(text, array, size); }};
    s.rules[g.rule_of_element(site.declaration)].line_before[name() + ":" + array] =
        "// gi registers: " + array + " is read below with literal indices only (a select per element), so it stays in registers";
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::RegistersFamily)
