// merge_runs: `merge_runs:<_k.cu_N>` keeps a thread's run of atomics to one
// address in a register. The atomic of line N (a site of privatise,
// analysis/privatise_sites.hpp: an operation that commutes with itself, into
// a buffer the kernel touches only with such atomics, at an address that
// differs between threads) becomes: if the address differs from the run's,
// the run so far goes out with one atomic and a new run starts at the
// operation's identity; the value is then combined into the run. Where the
// body ends, the last run goes out.
//
// This is for scatters whose neighbouring items share a target, such as
// voxels added into the node of a coarse grid: with `coarsen:K,consecutive`
// a thread's K voxels fall into a few nodes, and K atomics become a few. It
// needs no barrier, shuffle or shared memory, so it composes with any
// launch; the buffer is never read by the kernel, so holding its updates
// until the run ends changes nothing another thread sees. A float sum is
// reassociated, which the seed's tolerance judges as for any variant.
//
// aggregate and privatise rewrite the same statement: in a patch with two of
// them at one site, the later edit's statement is the one made, and what the
// earlier one added around it stays correct (a register left at the
// identity, a private copy nothing updates).
#include <cstdio>

#include "analysis/privatise_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

analysis::AggregateSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_privatise_sites(g.parsed(), edits::live_tokens(g, context));
}

// The run's atomic, made when it holds something.
std::string flush(const analysis::AggregateSite& site, const std::string& at, const std::string& run) {
  return "if (" + at + ") " + site.operation.function + "(" + at + ", " + run + ");";
}

std::vector<std::string> run_update(const analysis::AggregateSite& site, const std::string& at, const std::string& run) {
  return {"{  // gi merge_runs: one " + site.operation.function + " per run of this thread's values to one address",
          "    " + site.type + "* const gi_at = " + site.address + ";",
          "    if (gi_at != " + at + ") {",
          "        " + flush(site, at, run),
          "        " + at + " = gi_at;",
          "        " + run + " = " + analysis::identity_literal(site.operation.kind, site.type) + ";",
          "    }",
          "    " + edits::combine_value(site, run),
          "}"};
}

class MergeRunsFamily : public EditFamily {
 public:
  std::string name() const override { return "merge_runs"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override { return "merge_runs:<_k.cu_N> (N: an atomic site of privatise)"; }

  void parse(ArgumentReader& r, Edit& e) const override { e.target = r.rule_ref(); }
  std::string print(const Edit& e) const override { return "merge_runs:" + e.target; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown statement rule " + e.target;
    const auto sites = sites_of(g, context);
    if (edits::site_at(g, sites, t->index)) return std::nullopt;
    return edits::why_no_site(g, sites, t->index, e.target, name());
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const auto& s : sites_of(g, context).sites)
      out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.element)), "", 0, 0, ""});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    const std::size_t rule = *g.find(e.target);
    const analysis::AggregateSite& site = *edits::site_at(g, sites, rule);
    const std::string line = std::to_string(g.rule(rule).first_line);
    const std::string at = "gi_run_at_" + line, run = "gi_run_" + line;
    // Keys in source order, so the runs of two sites go out in the order of their statements.
    char key[40];
    std::snprintf(key, sizeof key, "%s %08zu", name().c_str(), rule);
    const std::size_t first = g.rule_of_element(site.body_first_element);
    const std::size_t close = g.rule_of_element(site.body_close_element);
    const std::string indent = edits::indentation_of(g.rule(rule).text);
    const std::string body_indent = edits::indentation_of(g.rule(first).text);
    s.rules[rule].text = indent + edits::joined(run_update(site, at, run), indent);
    s.rules[first].line_before_wraps[key] = site.type + "* " + at + " = 0; " + site.type + " " + run + " = " +
                                            analysis::identity_literal(site.operation.kind, site.type) + ";";
    s.rules[close].line_before[key] = body_indent + "// gi merge_runs: this thread's last run\n" + body_indent +
                                      flush(site, at, run);
    edits::keep_every_thread_to_the_end(g, site, s);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::MergeRunsFamily)
