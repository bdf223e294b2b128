// aggregate: `aggregate:<_k.cu_N>=warp|block` reduces before the atomic. The
// atomic of line N (add, min, max, and, or, xor: a site, which
// analysis/aggregate_sites.hpp finds, saying why the other atomics are not)
// becomes an update of a register declared where the kernel body starts
// (at the operation's identity); where the body ends, the warp combines its
// registers with shuffles and its first lane makes the one atomic (=warp), or
// the warps' results meet in shared memory and the block's first thread makes
// it (=block). A kernel's early exit `if (COND) return;` becomes
// `if (!(COND)) { ...rest of the body... }`, so every thread reaches the
// shuffles and the barrier. Partial warps (a block size that is no multiple
// of 32) shuffle among the lanes they have.
//
// `aggregate:all=warp|block` does the same at every site of the kernel at
// once. Every winner of the studies aggregated all the atomics that matter
// at one level; one edit for that lets a small search reach it without
// having to meet each site's edit separately (intensity_minmax has four).
// A site's own edit later in the patch overrides it at that site.
//
// The atomics' order and grouping change: a float sum is reassociated, which
// the seed's tolerance judges as for any variant (integer sums are exact).
#include <cstdio>

#include "analysis/aggregate_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"

namespace gi::grammar {
namespace {

analysis::AggregateSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_aggregate_sites(g.parsed(), edits::live_tokens(g, context));
}

// The lane's warp result of `v` (type t), among the lanes the warp has.
std::vector<std::string> warp_combine(const std::string& kind, const std::string& v, const std::string& t) {
  return {"for (unsigned gi_step = 16u; gi_step > 0u; gi_step >>= 1) {",
          "    const " + t + " gi_other = __shfl_down_sync(gi_mask, " + v + ", gi_step);",
          "    if (gi_lane + gi_step < gi_width) { " + edits::combine(kind, v, "gi_other") + " }", "}"};
}

std::vector<std::string> reduction(const analysis::AggregateSite& site, const std::string& acc, bool block) {
  const std::string& t = site.type;
  const std::string& kind = site.operation.kind;
  const std::string& atomic = site.operation.function;
  std::vector<std::string> out = {
      "{  // gi aggregate: one " + atomic + " per " + (block ? "block" : "warp") + " for all its threads' values",
      "    const unsigned gi_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);",
      "    const unsigned gi_threads = blockDim.x * blockDim.y * blockDim.z;",
      "    const unsigned gi_lane = gi_tid & 31u;",
      "    const unsigned gi_width = gi_threads - (gi_tid & ~31u) < 32u ? gi_threads - (gi_tid & ~31u) : 32u;",
      "    const unsigned gi_mask = gi_width == 32u ? 0xffffffffu : (1u << gi_width) - 1u;"};
  if (block) out.insert(out.begin() + 1, "    __shared__ " + t + " " + acc + "_warps[32];");
  for (const std::string& line : warp_combine(kind, acc, t)) out.push_back("    " + line);
  if (!block) {
    out.push_back("    if (gi_lane == 0u) " + atomic + "(" + site.address + ", " + acc + ");");
  } else {
    out.push_back("    if (gi_lane == 0u) " + acc + "_warps[gi_tid >> 5] = " + acc + ";");
    out.push_back("    __syncthreads();");
    out.push_back("    if (gi_tid < 32u) {");
    out.push_back("        " + t + " gi_sum = gi_tid < (gi_threads + 31u) / 32u ? " + acc + "_warps[gi_tid] : " +
                  analysis::identity_literal(kind, t) + ";");
    for (const std::string& line : warp_combine(kind, "gi_sum", t)) out.push_back("        " + line);
    out.push_back("        if (gi_tid == 0u) " + atomic + "(" + site.address + ", gi_sum);");
    out.push_back("    }");
  }
  out.push_back("}");
  return out;
}

class AggregateFamily : public EditFamily {
 public:
  std::string name() const override { return "aggregate"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "aggregate:<_k.cu_N>|all=warp|block (N: an atomic site; all: every site)";
  }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.accept_word(kEverySite) ? kEverySite : r.rule_ref();
    r.expect('=');
    e.literal = r.one_of({"warp", "block"});
  }
  std::string print(const Edit& e) const override { return "aggregate:" + e.target + "=" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (e.literal != "warp" && e.literal != "block") return "the level must be warp or block";
    if (e.target == kEverySite) {
      if (!sites_of(g, context).sites.empty()) return std::nullopt;
      return std::string("no aggregate site in the kernel");
    }
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown statement rule " + e.target;
    const auto sites = sites_of(g, context);
    if (edits::site_at(g, sites, t->index)) return std::nullopt;
    return edits::why_no_site(g, sites, t->index, e.target, name());
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    const auto sites = sites_of(g, context).sites;
    for (const auto& s : sites)
      for (const char* level : {"warp", "block"})
        out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.element)), "", 0, 0, level});
    // With one site, `all` is that site's edit again.
    if (sites.size() > 1)
      for (const char* level : {"warp", "block"}) out.push_back(Edit{name(), kEverySite, "", 0, 0, level});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    if (e.target != kEverySite) return apply_at(g, *edits::site_at(g, sites, *g.find(e.target)), e.literal, s);
    for (const auto& site : sites.sites) apply_at(g, site, e.literal, s);
  }

 private:
  static constexpr const char* kEverySite = "all";

  void apply_at(const Grammar& g, const analysis::AggregateSite& site, const std::string& level, PatchState& s) const {
    const std::size_t rule = g.rule_of_element(site.element);
    const std::string acc = "gi_sum_" + std::to_string(g.rule(rule).first_line);
    // Keys in source order (zero-padded), so the warps' results of two
    // atomics on one buffer go out in the order each thread made them.
    char key[32];
    std::snprintf(key, sizeof key, "%s %08zu", name().c_str(), rule);
    const std::size_t first = g.rule_of_element(site.body_first_element);
    const std::size_t close = g.rule_of_element(site.body_close_element);
    const std::string body_indent = edits::indentation_of(g.rule(first).text);
    s.rules[rule].text = edits::indentation_of(g.rule(rule).text) + edits::combine_value(site, acc);
    // Keyed by the site, so a later edit of the same site replaces an earlier.
    s.rules[first].line_before_wraps[key] = site.type + " " + acc + " = " + analysis::identity_literal(site.operation.kind, site.type) + ";";
    s.rules[close].line_before[key] = body_indent + edits::joined(reduction(site, acc, level == "block"), body_indent);
    edits::keep_every_thread_to_the_end(g, site, s);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::AggregateFamily)
